"""Engine patches hidden behind shell spellings the launch-script analyser must still see."""
from __future__ import annotations

import pytest

from recipes.scripts import analyze_script

PATH = "benchmarks/single_node/fixed_seq_len/dsv4_fp4_mi355x_sglang.sh"


def kinds(text: str) -> list[tuple[str, int]]:
    return [(p.kind, p.line) for p in analyze_script(text, PATH).patches]


@pytest.mark.parametrize("prefix", [
    "sudo -E ", "env PYTHONDONTWRITEBYTECODE=1 ", "nohup ", "timeout 600 ", "timeout -s KILL 10m ",
    "command ", "nice -n 5 ",
])
def test_wrapper_prefixes_do_not_hide_a_patch(prefix):
    text = f"cd /sgl-workspace/sglang\n{prefix}git apply /tmp/fix.diff\n"
    assert kinds(text) == [("git-apply", 2)]


def test_xargs_sed_inplace():
    text = "find /usr/local/lib/python3.12/dist-packages/vllm -name '*.py' | xargs -n 1 sed -i 's/a/b/' /usr/local/lib/python3.12/dist-packages/vllm/x.py\n"
    assert kinds(text) == [("sed-inplace", 1)]


def test_command_v_is_not_a_run():
    assert kinds("command -v git apply\n") == []


@pytest.mark.parametrize("flags", ["-0pi", "-pi.bak", "-i.orig -p", "-0777 -pi"])
def test_perl_inplace_spellings(flags):
    text = f"perl {flags} -e 's/x/y/' /opt/venv/lib/python3.12/site-packages/sglang/srt/server_args.py\n"
    assert kinds(text) == [("sed-inplace", 1)]


def test_bash_s_heredoc_body_is_analysed():
    text = (
        "bash -s <<'EOF'\n"
        "cd /sgl-workspace/sglang\n"
        "git apply /tmp/fix.patch\n"
        "EOF\n"
    )
    assert kinds(text) == [("git-apply", 3)]


def test_one_line_case_and_sh_c():
    assert kinds('case "$X" in a) patch -p1 -d /sgl-workspace/sglang < /tmp/p ;; esac\n') == [("patch", 1)]
    assert kinds("sh -lc 'git -C /workspace/vllm am /tmp/0001.patch'\n") == [("git-apply", 1)]


def test_python_heredoc_with_nested_parentheses_is_parsed_with_ast():
    text = (
        "python3 - <<'PY'\n"
        "import os, sglang\n"
        "target = os.path.join(os.path.dirname(sglang.__file__), 'srt', 'layers', 'x.py')\n"
        "with open(os.path.join(os.path.dirname(sglang.__file__), 'srt/y.py'), mode='a') as f:\n"
        "    f.write('# patched')\n"
        "PY\n"
    )
    (p,) = analyze_script(text, PATH).patches
    assert (p.kind, p.line, p.target) == ("heredoc-write", 1, "sglang.__file__")


def test_python_string_replace_is_not_a_write():
    text = "python3 - <<'PY'\nimport sglang\nprint(sglang.__file__.replace('a', 'b'))\nPY\n"
    assert kinds(text) == []


def test_cherry_pick_into_engine_tree():
    text = "cd /sgl-workspace/sglang\ngit fetch https://github.com/someone/sglang fix\ngit cherry-pick FETCH_HEAD\n"
    assert kinds(text) == [("git-apply", 3)]
    assert kinds("cd /tmp/tools\ngit cherry-pick abc123\n") == []


@pytest.mark.parametrize("text", [
    "curl -sSL https://example.com/setup.sh | bash\n",
    "wget -qO- https://example.com/x.sh | sudo sh\n",
    "source <(curl -s https://example.com/env.sh)\n",
    "bash <(curl -s https://example.com/x.sh)\n",
    'eval "$(curl -s https://example.com/x)"\n',
    'eval "$UNKNOWN_COMMAND"\n',
])
def test_code_the_bot_cannot_read_is_unverifiable(text):
    a = analyze_script(text, PATH)
    bad = a.unreadable
    assert bad is not None and bad.code == "shell-opaque" and bad.line == 1
    assert bad.message.startswith(f"could not read what line 1 of {PATH} runs")


def test_eval_of_a_known_string_is_analysed():
    text = 'CMD="git -C /sgl-workspace/sglang apply /tmp/p.diff"\neval "$CMD"\n'
    a = analyze_script(text, PATH)
    assert a.unreadable is None and [(p.kind, p.line) for p in a.patches] == [("git-apply", 2)]


def test_nested_arrays_expand_into_the_launch():
    text = (
        "SPEC_ARGS=(--speculative-config '{\"method\": \"mtp\", \"num_speculative_tokens\": 3}')\n"
        "EXTRA=\"--enforce-eager --max-num-seqs 64\"\n"
        "VLLM_CMD=(vllm serve $MODEL \"${SPEC_ARGS[@]}\" $EXTRA --port 8000)\n"
        '"${VLLM_CMD[@]}"\n'
    )
    sl = analyze_script(text, PATH).server_launch
    assert sl is not None and sl.engine == "vllm"
    assert sl.json_flags["speculative-config"]["num_speculative_tokens"] == 3
    assert sl.flags["speculative-config"].line == 1  # the line that wrote the JSON
    assert sl.flags["max-num-seqs"].value == "64" and "enforce-eager" in sl.flags


@pytest.mark.parametrize("expr, want", [
    ("$((2 + 3 * 4))", "14"), ("$((7 / 2))", "3"), ("$(( (DRAFT + 1) * 2 ))", "8"),
    ("$(awk 'BEGIN{print (2.99-1)/3}')", "0.663333"), ('$(awk "BEGIN {print 1+2.5}")', "3.5"),
    ("$((ISL + UNKNOWN))", "$((ISL + UNKNOWN))"), ("$((ISL + OSL))", "2048"),
])
def test_literal_arithmetic(expr, want):
    text = f"DRAFT=3\nISL=1024\nOSL=$ISL\nexport SGLANG_SIMULATE_ACC_LEN={expr}\n"
    assert analyze_script(text, PATH).exports["SGLANG_SIMULATE_ACC_LEN"].resolved == want
