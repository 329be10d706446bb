"""Time and memory of every hostile input, each in its own capped process (issue 29: "no case
runs over 2 s or 300 MB").

    python bench/hostile_bounds.py [--json] [--jobs J] [-k SUBSTRING] [--corpus-only | --probes-only]

Runs every case of the hostile corpus (tests/hostile/) and a wider set of generated probes (the
adversarial shell, YAML and Markdown shapes of docs/bounds.md at full size: 1 MB scripts,
64 doublings, 10,000-deep nesting, 100,000-slice zips...), each as `python -m tests.e2e.test_hostile
CASE.yaml` under an address-space limit (RLIMIT_AS, 1 GiB by default) and a wall-clock timeout.
A probe asserts only what every case does (no check crashes, the verdict renders). Per case it
prints the bot's CPU seconds and wall seconds (snapshot + verdict; building the world excluded)
and the process's peak RSS, and flags a case over 2 CPU seconds or 300 MB, a timeout, or a crash
(a MemoryError under the limit is a crash). Exit status 1 when any case is flagged.

The CPU seconds are the bar: on a machine shared by other jobs the wall time measures the load.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.test_hostile import CASES, CASES_DIR, CHILD_MODULE, load_case  # noqa: E402

MAX_CPU_SECONDS = 2.0
MAX_RSS_MB = 300
ADDRESS_SPACE = 1 << 30
TIMEOUT = 60.0

# The probes' launcher scripts go where the corpus's script cases put theirs: the launcher of one
# point of a one-entry master config (the case's snapshot, its script replaced).
_SCRIPT_CASE = load_case(CASES_DIR / "script-6000-statements.yaml")["snapshot"]
SCRIPT = next(p for p in _SCRIPT_CASE["head"] if p.endswith(".sh"))
MASTER = _SCRIPT_CASE["head"]["configs/amd-master.yaml"]
LAUNCH = "python3 -m sglang.launch_server --model-path $MODEL --tp 8 &\n"
RECIPE = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom/mi355x-fp4-mtp/agentic.yaml"


def _shell_probes() -> dict[str, str]:
    """Launcher scripts of every shape that blew up (or might): full size, not the corpus's."""
    nest = 10_000
    return {
        "double-straight-64": "x=abcdefgh\n" + 'x="$x$x"\n' * 64,
        "append-straight-64": "x=abcdefgh\n" + 'x+="$x"\n' * 64,
        "export-chain-40": "export x0=aaaaaaaaaa\n" + "".join(f'export x{i + 1}="$x{i}$x{i}"\n' for i in range(40)),
        "array-double-30": "A=(a b c d)\n" + 'A=("${A[@]}" "${A[@]}")\n' * 30,
        "array-append-30": "A=(a b)\n" + 'A+=("${A[@]}")\n' * 30,
        "array-ref-many": "A=(" + "x " * 30_000 + ")\n" + 'echo "${A[@]}"\n' * 300,
        "nested-default-10k": "y=" + "${a:-" * nest + "x" + "}" * nest + "\n",
        "nested-subst-10k": "echo " + "$(" * nest + "x" + ")" * nest + "\n",
        "nested-dq-subst-20k": 'echo "' + '$("' * 20_000 + "x" + '")' * 20_000 + '"\n',
        "brace-group-60k": "{ " * 60_000 + "x; " + "} " * 60_000,
        "brace-expansion": "echo {1..999999999} " + "{a,b}" * 40 + "\n",
        "printf-width": "x=$(printf '%0999999999d' 1)\n",
        "printf-precision": "x=$(printf '%.999999999f' 1)\n",
        "arith-pow-shift": "x=$(( 2**62 ))\ny=$(( 1 << 4096 ))\n" + "z=999999999\n" + "z=$(( z*z*z*z*z*z*z*z ))\n" * 40,
        "adjacent-quoted-parts-250k": "echo " + "\"a\"'b'" * 40_000 + "\n",
        "adjacent-escaped-parts-250k": "echo " + '"a"\\${B}' * 30_000 + "\n",
        "semicolons-100k": "a;" * 100_000 + "\n",
        "lines-100k": "echo a\n" * 100_000,
        "pipes-100k": "echo a" + " | cat" * 100_000 + "\n",
        "and-list-80k": "a&&" * 80_000 + "a\n",
        "heredoc-100k-lines": "cat > /tmp/x <<EOF\n" + "line $x\n" * 100_000 + "EOF\n",
        "heredoc-20k-resolved": "x=abc\ncat > /tmp/x <<EOF\n" + "l $x $x $x\n" * 20_000 + "EOF\n",
        "python-heredoc-writes": "python3 - <<'EOF'\n" + "open('/usr/lib/python3/site-packages/x','w')\n" * 5_000 + "EOF\n",
        "eval-of-itself": "e='eval \"$e\"'\neval \"$e\"\n",
        "eval-10k-deep": "eval " + "eval " * 10_000 + "x\n",
        "function-recursive-and-self-source": "f() { f; }\nf\nsource \"$0\"\n",
        "case-20k-arms": 'case "$x" in\n' + "".join(f"  a{i}) echo {i};;\n" for i in range(20_000)) + "esac\n",
        "elif-10k": "if [ a = b ]; then echo 0\n" + "".join(f'elif [ "$X" = v{i} ]; then echo {i}\n' for i in range(10_000)) + "fi\n",
        "if-nested-2k": "if [ a ]; then\n" * 2000 + "echo x\n" + "fi\n" * 2000,
        "ifs-split-300k": "IFS=,\nx=" + "a," * 100_000 + "\nfor i in $x; do echo $i; done\n",
        "trim-glob-200k": "x=" + "a" * 200_000 + "\necho ${x%%*b} ${x##*a*a*b}\n",
        "value-in-5000-words": "x=" + "a" * 60_000 + "\n" + 'echo "$x"\n' * 5000,
        "unclosed-quote": 'echo "' + "a\n" * 100_000,
        "git-apply-long-word": "git apply " + "a." * 100_000 + "\n",
        "case-subject-long-word": 'case "' + "a" * 200_000 + '" in x) echo;; esac\n',
        "sudo-nested-10": "sudo " * 10 + "sed -i s/a/b/ /usr/lib/python3/dist-packages/x.py\n",
        # Just under the bounds that refuse a script before parsing: the walk's own bounds hold.
        "statements-4900-under-size-cap": ("echo " + "a" * 40 + "\n") * 4900,
        "semicolons-29k-under-separator-cap": "a;" * 29_000 + "\n",
        "pipes-19k-under-operator-cap": "echo a" + " | cat" * 19_000 + "\n",
        "substitutions-499-deep-200-times": ("x=" + "$(" * 499 + ")" * 499 + "\n") * 200,
        "elif-1500-under-condition-cap": "if [ a = b ]; then echo 0\n" + "".join(
            f'elif [ "$X" = v{i} ]; then echo {i}\n' for i in range(1500)) + "fi\n",
    }


def _probe_cases() -> dict[str, dict]:
    expect_any = {"rows": {10: {"reason_excludes": ["could not be evaluated"]}}}
    out: dict[str, dict] = {}
    for name, body in _shell_probes().items():
        out[f"probe-script-{name}"] = {
            "description": f"bench probe: launcher script {name}",
            "snapshot": {"base": _SCRIPT_CASE["base"],
                         "head": {"configs/amd-master.yaml": MASTER, SCRIPT: "#!/usr/bin/env bash\n" + body + LAUNCH}},
            "only": [8, 9, 10, 11, 13], "expect": expect_any}
    base = "base:\n  schema: 2"
    yaml_probes = {
        "recipe-zip-100k": {RECIPE: {"$sub": [[base, "zip_override_z:\n  name: [" + "n, " * 100_000 + "n]\n" + base]]}},
        "recipe-override-20k": {RECIPE: {"$sub": [[base, "".join(f"override_{i}:\n  name: y{i}\n" for i in range(20_000)) + base]]}},
        "recipe-alias-bomb": {RECIPE: {"$sub": [[base, "a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
            f"a{i + 1}: &a{i + 1} [" + ",".join([f"*a{i}"] * 10) + "]\n" for i in range(9)) + base]]}},
        "recipe-merge-chain": {RECIPE: {"$sub": [[base, "m0: &m0 {" + ",".join(f"k{i}: {i}" for i in range(200)) + "}\n" + "".join(
            f"m{i + 1}: &m{i + 1}\n  <<: [*m{i}, *m{i}]\n  z{i}: 1\n" for i in range(2000)) + base]]}},
        "recipe-deep-10k": {RECIPE: {"$sub": [[base, "deep: " + "[" * 10_000 + "]" * 10_000 + "\n" + base]]}},
        "recipe-300k-keys": {RECIPE: {"$sub": [[base, "many:\n" + "".join(f"  k{i}: {i}\n" for i in range(300_000)) + base]]}},
        "changelog-60k-items": {"inferencex-e2e/perf-changelog.yaml": {"$repeat": "- config-keys: [dsr1-fp4-mi355x-sglang]\n  description: [x]\n  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n", "times": 60_000}},
        "master-conc-list-59k": {"inferencex-e2e/configs/amd-master.yaml": {"$sub": [["conc-list: [1, 4, 5, 6, 8, 32]", "conc-list: [" + "1, " * 59_000 + "1]"]]}},
    }
    for name, files in yaml_probes.items():
        out[f"probe-{name}"] = {"description": f"bench probe: {name}", "world": "seed",
                                "edit": {"files": {"c1": files}}, "expect": {}}
    bodies = {
        "blank-run-arrow": "tp" + " " * 65_000 + "->",
        "brackets": "[" * 40_000 + "](" * 10_000,
        "emphasis": "*a" * 32_000,
        "prose-removal": "remove " + "a " * 32_000,
        "headings": "## a\n" * 13_000,
        "html-nesting": "<details>" * 7_000,
    }
    for name, body in bodies.items():
        out[f"probe-pr-body-{name}"] = {"description": f"bench probe: PR body {name}", "world": "seed",
                                        "edit": {"pr": {"body": body[:65_536]}}, "expect": {}}
    return out


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def run_one(path: Path, timeout: float) -> dict:
    try:
        # Two malloc arenas: glibc reserves 64 MB of address space per thread's arena, and the
        # emulator cases' HTTP threads would spend the limit on reservations, not on memory.
        proc = subprocess.run([sys.executable, "-m", CHILD_MODULE, str(path)], capture_output=True, text=True,
                              timeout=timeout, cwd=ROOT, preexec_fn=_limit_memory,
                              env={**os.environ, "MALLOC_ARENA_MAX": "2"})
    except subprocess.TimeoutExpired:
        return {"case": path.stem, "error": f"timeout after {timeout:.0f} s"}
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()
        return {"case": path.stem, "error": (tail[-1] if tail else f"exit {proc.returncode}")[:300]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("--corpus-only", action="store_true")
    ap.add_argument("--probes-only", action="store_true")
    ap.add_argument("--timeout", type=float, default=TIMEOUT)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="infx-bounds-") as tmp:
        paths = [] if args.probes_only else list(CASES)
        if not args.corpus_only:
            for name, case in _probe_cases().items():
                p = Path(tmp) / f"{name}.yaml"
                p.write_text(yaml.safe_dump(case, sort_keys=False, width=1 << 30), encoding="utf-8")
                paths.append(p)
        paths = [p for p in paths if args.k in p.stem]
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            rows = list(pool.map(lambda p: run_one(p, args.timeout), paths))
    for r in rows:
        over = "error" in r or r["cpu_seconds"] > MAX_CPU_SECONDS or r["peak_rss_mb"] > MAX_RSS_MB
        r["flag"] = "OVER" if over else ""
    ok = [r for r in rows if "error" not in r]
    summary = {"cases": len(rows), "probes": sum(r["case"].startswith("probe-") for r in rows),
               "max_cpu_seconds": max((r["cpu_seconds"] for r in ok), default=0),
               "max_wall_seconds": max((r["seconds"] for r in ok), default=0),
               "max_peak_rss_mb": max((r["peak_rss_mb"] for r in ok), default=0),
               "flagged": [r["case"] for r in rows if r["flag"]]}
    if args.json:
        print(json.dumps({"summary": summary, "cases": rows}, indent=2))
    else:
        print(f"{'case':<58} {'cpu s':>7} {'wall s':>7} {'RSS MB':>7}")
        for r in sorted(rows, key=lambda r: -r.get("cpu_seconds", 99)):
            print(f"{r['case']:<58} {r.get('cpu_seconds', '-'):>7} {r.get('seconds', '-'):>7} "
                  f"{r.get('peak_rss_mb', '-'):>7} {r['flag']} {r.get('error', '')}")
        print(json.dumps(summary))
    return 1 if summary["flagged"] else 0


if __name__ == "__main__":
    sys.exit(main())
