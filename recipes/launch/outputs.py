"""Commands whose standard output the interpreter computes: path arithmetic, a file's text,
`seq`, `mktemp`, and `sed`/`tr`/`cut`/`head`/`tail` over known input."""
from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Callable, Optional

from .state import MAX_FIELDS, MAX_TRIM_CHARS, SHELL_SET, State, _join_unknown, symbol
from .words import Unknown, Word

if TYPE_CHECKING:
    from .shell import Interpreter


# External commands whose output the interpreter never needs (quiet by nature).
_PURE_QUIET: dict[str, bool] = {"sleep": True, "mkdir": True, "rm": True, "cp": True, "mv": True, "touch": True,
                                "chmod": True, "ln": True, "wait": True}


def _o_dirname(it: Interpreter, argv, state, stdin):
    args = [a for a in argv[1:] if a != "--"]
    if not args or isinstance(args[0], Unknown):
        return (args[0] if args else Unknown("dirname of nothing")), None
    d = posixpath.dirname(args[0].rstrip("/")) or "."
    return d + "\n", 0


def _o_basename(it: Interpreter, argv, state, stdin):
    args = [a for a in argv[1:] if a not in ("--", "-a")]
    if not args or isinstance(args[0], Unknown):
        return (args[0] if args else Unknown("basename of nothing")), None
    b = posixpath.basename(args[0].rstrip("/"))
    if len(args) > 1 and isinstance(args[1], str) and b.endswith(args[1]) and b != args[1]:
        b = b[: -len(args[1])]
    return b + "\n", 0


def _o_realpath(it: Interpreter, argv, state, stdin):
    args = [a for a in argv[1:] if not (isinstance(a, str) and a.startswith("-"))]
    if argv[0] == "readlink" and "-f" not in argv and "-e" not in argv and "-m" not in argv:
        return Unknown("the target of a link"), None
    if not args:
        return Unknown(f"{argv[0]} of nothing"), None
    path = it.local_path(args[0], state)
    if isinstance(path, Unknown):
        return path, None
    return path + "\n", 0


def _o_cat(it: Interpreter, argv, state, stdin):
    args = [a for a in argv[1:] if not (isinstance(a, str) and a.startswith("-") and a != "-")]
    if not args:
        return (stdin if stdin is not None else Unknown("cat of its input")), 0
    parts: list[Word] = []
    for a in args:
        if a == "-":
            parts.append(stdin if stdin is not None else Unknown("cat of its input"))
            continue
        parts.append(it.read_text(it.host_path(a, state), state, None, None))
    return _join_unknown(parts), None


def _o_seq(it: Interpreter, argv, state, stdin):
    nums = []
    for a in argv[1:]:
        try:
            nums.append(int(a) if isinstance(a, str) else None)
        except ValueError:
            return Unknown("seq of words that are not integers"), None
    if None in nums or not 1 <= len(nums) <= 3:
        return Unknown("seq of unknown bounds"), None
    first, step, last = (1, 1, nums[0]) if len(nums) == 1 else (nums[0], 1, nums[1]) if len(nums) == 2 else nums
    if step == 0 or abs(last - first) // abs(step) > MAX_FIELDS:
        return Unknown(f"seq of over {MAX_FIELDS:,} numbers"), None
    return "".join(f"{n}\n" for n in range(first, last + (1 if step > 0 else -1), step)), 0


def _o_mktemp(it: Interpreter, argv, state, stdin):
    """`mktemp [-d] [-p DIR] [TEMPLATE]`: one fixed name per template, so a trace is repeatable."""
    args = [a for a in argv[1:]]
    folder: Word = "/tmp"
    template: Word = "tmp.XXXXXXXXXX"
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-p", "--tmpdir") and i + 1 < len(args):
            folder = args[i + 1]
            i += 2
            continue
        if isinstance(a, str) and a.startswith("--tmpdir="):
            folder = a.split("=", 1)[1]
        elif isinstance(a, Unknown) or not a.startswith("-"):
            template = a
        i += 1
    if isinstance(template, Unknown) and isinstance(folder, str) and template.prefix.startswith("/"):
        # `mktemp "/tmp/ws-${JOB_ID}.XXXXXX.tar.gz"`: its known ends, the X's made fixed as above.
        return Unknown("a temporary name", template.prefix, template.suffix.replace("X", "0")), None
    if isinstance(template, Unknown) or isinstance(folder, Unknown):
        return Unknown("a temporary name"), None
    name = template.replace("X", "0") if "/" in template else posixpath.join(folder, template.replace("X", "0"))
    return it.host_path(name, state) if isinstance(it.host_path(name, state), Unknown) else name + "\n", 0


def _bre(pattern: str, extended: bool) -> Optional[str]:
    """A sed regular expression as a Python one (None when it uses what this does not read)."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            d = pattern[i + 1]
            if not extended and d in "(){}+?|":
                out.append(d)
            elif d.isdigit() or d in "nt.*[]^$\\/":
                out.append("\\" + d)
            elif d in "wWsSbB":
                out.append("\\" + d)
            else:
                out.append(re.escape(d))
            i += 2
            continue
        if c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("^", "]") else i + 1)
            if j < 0:
                return None
            out.append(pattern[i:j + 1].replace("[:alpha:]", "a-zA-Z").replace("[:digit:]", "0-9")
                       .replace("[:space:]", " \\t").replace("[:alnum:]", "a-zA-Z0-9"))
            i = j + 1
            continue
        if not extended and c in "(){}+?|":
            out.append("\\" + c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _sed_script(script: str, extended: bool) -> Optional[Callable[[str], str]]:
    """`s/RE/REPL/FLAGS` commands joined by `;` (the only sed programs modelled)."""
    steps = []
    for part in [p.strip() for p in script.split(";") if p.strip()]:
        if len(part) < 4 or part[0] != "s":
            return None
        delim = part[1]
        pieces, cur, i = [], [], 2
        while i < len(part):
            ch = part[i]
            if ch == "\\" and i + 1 < len(part):
                cur.append(part[i:i + 2] if part[i + 1] != delim else delim)
                i += 2
                continue
            if ch == delim:
                pieces.append("".join(cur))
                cur = []
            else:
                cur.append(ch)
            i += 1
        pieces.append("".join(cur))
        if len(pieces) != 3 or not re.fullmatch(r"g?I?\d*g?", pieces[2]):
            return None
        rx = _bre(pieces[0], extended)
        if rx is None:
            return None
        try:
            compiled = re.compile(rx, re.I if "I" in pieces[2] else 0)
        except re.error:
            return None
        repl = pieces[1]

        def expand(m: re.Match, repl: str = repl) -> str:
            return re.sub(r"\\(\d)|&|\\(.)", lambda r: (m.group(int(r.group(1))) or "") if r.group(1) else
                          (m.group(0) if r.group(0) == "&" else r.group(2)), repl)
        steps.append((compiled, expand, 0 if "g" in pieces[2] else 1))

    def run(text: str) -> str:
        lines = text.split("\n")
        for compiled, expand, count in steps:
            lines = [compiled.sub(expand, ln, count=count) for ln in lines]
        return "\n".join(lines)
    return run


def _o_sed(it: Interpreter, argv, state, stdin):
    """`sed [-E] [-e] 's/RE/REPL/g'` over known input; anything else is unknown output."""
    args = list(argv[1:])
    extended, scripts, files = False, [], []
    while args:
        a = args.pop(0)
        if isinstance(a, Unknown):
            return Unknown("the output of sed"), None
        if a in ("-E", "-r", "--regexp-extended"):
            extended = True
        elif a == "-e" and args:
            scripts.append(args.pop(0))
        elif a.startswith("-"):
            return Unknown("the output of sed"), None
        elif not scripts:
            scripts.append(a)
        else:
            files.append(a)
    if files or not scripts or any(isinstance(x, Unknown) for x in scripts) or not isinstance(stdin, str):
        return Unknown("the output of sed"), None
    run = _sed_script(";".join(scripts), extended)
    if run is None or len(stdin) > MAX_TRIM_CHARS:
        return Unknown("the output of sed"), None
    return run(stdin), 0


def _o_head_tail(it: Interpreter, argv, state, stdin):
    args = [a for a in argv[1:]]
    count = 10
    if args and isinstance(args[0], str) and re.fullmatch(r"-n?\d+", args[0]):
        count = int(args[0].lstrip("-n"))
        args = args[1:]
    elif len(args) >= 2 and args[0] == "-n" and isinstance(args[1], str) and args[1].isdigit():
        count = int(args[1])
        args = args[2:]
    if args or not isinstance(stdin, str):
        return Unknown(f"the output of {argv[0]}"), None
    lines = stdin.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    picked = lines[:count] if argv[0] == "head" else lines[-count:] if count else []
    return "".join(ln + "\n" for ln in picked), 0


def _o_tr(it: Interpreter, argv, state, stdin):
    args = list(argv[1:])
    if not isinstance(stdin, str) or not all(isinstance(a, str) for a in args):
        return Unknown("the output of tr"), None
    delete = args and args[0] == "-d"
    sets = args[1:] if delete else args
    plain = all(re.fullmatch(r"(?:[^\\\[]|a-z|A-Z|0-9)+", x) for x in sets)
    if not plain or len(sets) != (1 if delete else 2):
        return Unknown("the output of tr"), None

    def chars(x: str) -> str:
        return x.replace("a-z", "abcdefghijklmnopqrstuvwxyz").replace("A-Z", "ABCDEFGHIJKLMNOPQRSTUVWXYZ") \
            .replace("0-9", "0123456789")
    if delete:
        return stdin.translate({ord(c): None for c in chars(sets[0])}), 0
    a, b = chars(sets[0]), chars(sets[1])
    b = b + b[-1:] * (len(a) - len(b)) if b else b
    return stdin.translate({ord(x): ord(y) for x, y in zip(a, b)}), 0


def _o_cut(it: Interpreter, argv, state, stdin):
    args = list(argv[1:])
    delim, field = "\t", None
    while args:
        a = args.pop(0)
        if not isinstance(a, str):
            return Unknown("the output of cut"), None
        if a == "-d" and args and isinstance(args[0], str):
            delim = args.pop(0)
        elif a.startswith("-d") and len(a) > 2:
            delim = a[2:]
        elif a == "-f" and args and isinstance(args[0], str) and args[0].isdigit():
            field = int(args.pop(0))
        elif a.startswith("-f") and a[2:].isdigit():
            field = int(a[2:])
        else:
            return Unknown("the output of cut"), None
    if field is None or not isinstance(stdin, str) or len(delim) != 1:
        return Unknown("the output of cut"), None
    lines = stdin.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = []
    for ln in lines:
        parts = ln.split(delim)
        out.append((parts[field - 1] if field - 1 < len(parts) else "") if delim in ln else ln)
    return "".join(x + "\n" for x in out), 0


def _o_python(it: "Interpreter", argv, state, stdin):
    """`python3 -c PROGRAM` whose program is the AMD server scripts' model-settings reader
    (recipes.models_yaml): the `NAME="value"` lines it prints for the entry it selects. Values
    the program computes otherwise are left out (they stay unset, so unknown where read)."""
    from recipes.models_yaml import read_program, select_entry

    args = list(argv[1:])
    while args and isinstance(args[0], str) and args[0] in ("-u", "-B", "-E", "-s", "-I"):
        args = args[1:]
    if len(args) < 2 or args[0] != "-c" or not isinstance(args[1], str):
        return Unknown(f"the output of {argv[0]}"), None
    program = read_program(args[1])
    if program is None or "$" in program.config or "$" in program.model:
        return Unknown(f"the output of {argv[0]} -c"), None
    host = it.host_path(program.config, state)
    rel = it.files.repo_path(host) if isinstance(host, str) else None
    text = it.files.read(host) if rel else None
    if text is None:
        return Unknown(f"the output of {argv[0]} -c (it reads {program.config}, which is not in the repository)"), None
    entry = select_entry(text.encode("utf-8"), rel, program, program.model, program.agentic)
    if isinstance(entry, str):
        return Unknown(f"the output of {argv[0]} -c ({entry})"), None
    lines = [f"{v.var}='" + v.value.replace("'", "'\\''") + "'" for v in entry.values if v.value is not None]
    return "".join(line + "\n" for line in lines), 0


# Commands whose standard output the interpreter computes (path arithmetic, a file's text).
_OUTPUT_MODELS: dict[str, Callable[..., tuple[Word, Optional[int]]]] = {
    "dirname": _o_dirname, "basename": _o_basename, "realpath": _o_realpath, "readlink": _o_realpath,
    "cat": _o_cat, "seq": _o_seq, "mktemp": _o_mktemp, "sed": _o_sed, "head": _o_head_tail, "tail": _o_head_tail,
    "tr": _o_tr, "cut": _o_cut, "python3": _o_python, "python": _o_python,
}


_ENVIRONMENT_DEFAULTS: dict[str, Callable[[State], Word]] = {
    "PWD": lambda s: s.cwd,
    "IFS": lambda s: " \t\n",
    "BASH_SOURCE": lambda s: s.argv0,
    "HOME": lambda s: "/root",
}
# Variables bash itself sets in every shell, to values of the machine the job runs on: each is
# a symbol (recipes.launch.state.SYMBOL), so `/tmp/enroot-runtime-${UID}` is one known path in
# every trace while a test or arithmetic that reads it (`[ "$EUID" -ne 0 ]`) is not decided.
_ENVIRONMENT_DEFAULTS.update({name: (lambda n: lambda s: symbol(n))(name) for name in SHELL_SET})
