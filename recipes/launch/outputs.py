"""Commands whose standard output the interpreter computes: path arithmetic, a file's text,
`seq`, `mktemp`, and `sed`/`tr`/`cut`/`head`/`tail` over known input."""
from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING, Callable, Optional

from .chars import HOST_NAMES, INTEGER, INTEGER_LINES, ROUTE_OUTPUT, awk_output, path_lookup_chars, regex_chars, tr_set
from .state import MAX_FIELDS, MAX_TRIM_CHARS, SHELL_SET, State, _join_unknown, symbol
from .words import Unknown, Word, chars_of, unclassed

if TYPE_CHECKING:
    from .shell import Interpreter


# External commands whose output the interpreter never needs (quiet by nature).
_PURE_QUIET: dict[str, bool] = {"sleep": True, "mkdir": True, "rm": True, "cp": True, "mv": True, "touch": True,
                                "chmod": True, "ln": True, "wait": True}


def _o_dirname(it: Interpreter, argv, state, stdin):
    args = [a for a in argv[1:] if a != "--"]
    if not args or isinstance(args[0], Unknown):
        return (unclassed(args[0]) if args else Unknown("dirname of nothing")), None
    d = posixpath.dirname(args[0].rstrip("/")) or "."
    return d + "\n", 0


def _o_basename(it: Interpreter, argv, state, stdin):
    args = [a for a in argv[1:] if a not in ("--", "-a")]
    if not args or isinstance(args[0], Unknown):
        return (unclassed(args[0]) if args else Unknown("basename of nothing")), None
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
        return unclassed(path), None
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


# The point's values a trace carries as symbols (state.symbol) that are integers: its
# concurrency (recipes.points: an int of the master config's list).
_INTEGER_SYMBOLS = frozenset(symbol(name) for name in ("CONC",))


def integer_word(word: Word) -> bool:
    """Whether a word not known is known to be an integer: an unknown of digits and `-` only
    (what arithmetic prints), or the symbol of an integer value of the point."""
    if isinstance(word, Unknown):
        return bool(word.chars) and word.chars <= INTEGER and not word.prefix and not word.suffix
    return word in _INTEGER_SYMBOLS


def _o_seq(it: Interpreter, argv, state, stdin):
    """`seq [FIRST [STEP]] LAST` of integers: the numbers, one a line. A bound not known but
    known to be an integer (arithmetic's output, the point's concurrency) gives numbers not known,
    still digits and `-` one a line (chars.INTEGER_LINES)."""
    nums = []
    for a in argv[1:]:
        if integer_word(a):
            nums.append(None)
            continue
        try:
            nums.append(int(a) if isinstance(a, str) else None)
        except ValueError:
            return Unknown("seq of words that are not integers"), None
    if not 1 <= len(nums) <= 3:
        return Unknown("seq of unknown bounds"), None
    if None in nums:
        known = all(isinstance(a, str) or integer_word(a) for a in argv[1:])
        return Unknown("seq of unknown bounds", chars=INTEGER_LINES if known else None), None
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


def _sed_script(script: str, extended: bool) -> Optional[tuple[Callable[[str], str], list[str]]]:
    """`s/RE/REPL/FLAGS` commands joined by `;` (the only sed programs modelled): the program,
    and the replacements it writes."""
    steps, replacements = [], []
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
        replacements.append(repl)

        def expand(m: re.Match, repl: str = repl) -> str:
            return re.sub(r"\\(\d)|&|\\(.)", lambda r: (m.group(int(r.group(1))) or "") if r.group(1) else
                          (m.group(0) if r.group(0) == "&" else r.group(2)), repl)
        steps.append((compiled, expand, 0 if "g" in pieces[2] else 1))

    def run(text: str) -> str:
        lines = text.split("\n")
        for compiled, expand, count in steps:
            lines = [compiled.sub(expand, ln, count=count) for ln in lines]
        return "\n".join(lines)
    return run, replacements


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
    if files or not scripts or any(isinstance(x, Unknown) for x in scripts) or stdin is None:
        return Unknown("the output of sed"), None
    script = ";".join(scripts)
    program = _sed_script(script, extended)
    if program is None or (isinstance(stdin, str) and len(stdin) > MAX_TRIM_CHARS):
        return Unknown("the output of sed"), None
    run, replacements = program
    if isinstance(stdin, str):
        return run(stdin), 0
    bound = chars_of(stdin)
    written = "".join(replacements)
    if bound is None or re.search(r"\\[xodcLUluE]", written):
        return Unknown("the output of sed"), None  # `\x27` is any character, `\U` other letters
    # Its input's characters (it ends no line its input did not), and what its replacements
    # write: their text, and a newline or a tab they write as `\n`, `\t`.
    escapes = {"\n"} if "\\n" in written else set()
    escapes |= {"\t"} if "\\t" in written else set()
    return Unknown("the output of sed", chars=bound | frozenset(written) | escapes), None


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
        # Some lines of its input: of the characters the input can hold.
        bound = chars_of(stdin) if stdin is not None and not args else None
        return Unknown(f"the output of {argv[0]}", chars=bound), None
    lines = stdin.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    picked = lines[:count] if argv[0] == "head" else lines[-count:] if count else []
    return "".join(ln + "\n" for ln in picked), 0


def _o_tr(it: Interpreter, argv, state, stdin):
    """`tr [-c] [-d] SET1 [SET2]`: computed over known input; over input whose characters are
    bounded, or with `-c` (what is not in SET1 becomes SET2's last character, or is deleted),
    what characters the output can hold."""
    args = list(argv[1:])
    flags = ""
    while args and isinstance(args[0], str) and re.fullmatch(r"-[cdC]+", args[0]):
        flags += args.pop(0)[1:].replace("C", "c")
    if args and args[0] == "--":
        args.pop(0)
    elif any(isinstance(a, str) and a.startswith("-") and len(a) > 1 for a in args):
        return Unknown("the output of tr"), None  # `-s` squeezes, `-t` truncates: not read here
    sets = [tr_set(a) if isinstance(a, str) else None for a in args]
    if any(x is None for x in sets) or len(sets) != (1 if "d" in flags else 2) or ("c" in flags and "d" not in flags
                                                                                    and not sets[1]):
        return Unknown("the output of tr"), None
    delete = "d" in flags
    if "c" in flags:
        keep = frozenset(sets[0])
        if isinstance(stdin, str) and (delete or len(set(sets[1])) == 1):
            return "".join(c if c in keep else ("" if delete else sets[1][-1]) for c in stdin), 0
        # What is not in SET1 becomes a character of SET2 (in the order of the complement).
        return Unknown("the output of tr", chars=keep if delete else keep | frozenset(sets[1])), None
    if delete:
        if isinstance(stdin, str):
            return stdin.translate({ord(c): None for c in sets[0]}), 0
        bound = chars_of(stdin) if stdin is not None else None
        return Unknown("the output of tr", chars=None if bound is None else bound - frozenset(sets[0])), None
    a, b = sets[0], sets[1]
    b = b + b[-1:] * (len(a) - len(b))
    table = {ord(x): ord(y) for x, y in zip(a, b)}  # of a character SET1 repeats, the last counts
    if isinstance(stdin, str):
        return stdin.translate(table), 0
    bound = chars_of(stdin) if stdin is not None else None
    if bound is None:
        return Unknown("the output of tr"), None
    return Unknown("the output of tr", chars=frozenset(c.translate(table) for c in bound)), None


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


def _o_paste(it: Interpreter, argv, state, stdin):
    """`paste -s [-d DELIMS]` of its input whose characters are bounded: those and the delimiters."""
    args = list(argv[1:])
    serial, delims = False, "\t"
    while args:
        a = args.pop(0)
        m = re.fullmatch(r"-(s?)(?:d(.*))?(s?)", a) if isinstance(a, str) else None
        if m is None or (m.group(2) == "" and not args):
            return Unknown("the output of paste"), None
        serial = serial or bool(m.group(1) or m.group(3))
        if m.group(2) is not None:
            d = m.group(2) if m.group(2) != "" else args.pop(0)
            if not isinstance(d, str):
                return Unknown("the output of paste"), None
            delims = d
    bound = chars_of(stdin) if stdin is not None and serial else None
    if bound is None or "\\" in delims:
        return Unknown("the output of paste"), None
    return Unknown("the output of paste", chars=bound | frozenset(delims) | {"\n"}), None


def _o_grep(it: Interpreter, argv, state, stdin):
    """`grep` over its input or one file: with `-o`, only what the pattern can match; else lines
    of a text whose characters are known or bounded."""
    args = list(argv[1:])
    flags, patterns, files = "", [], []
    while args:
        a = args.pop(0)
        if not isinstance(a, str):
            return Unknown(f"the output of {argv[0]}"), None
        if a == "-e" and args:
            patterns.append(args.pop(0))
        elif a.startswith("--") or (a.startswith("-") and len(a) > 1 and not re.fullmatch(r"-[oPEFihsaxw]+", a)):
            return Unknown(f"the output of {argv[0]}"), None
        elif a.startswith("-") and len(a) > 1:
            flags += a[1:]
        elif not patterns:
            patterns.append(a)
        else:
            files.append(a)
    if not patterns or len(files) > 1 or any(not isinstance(p, str) for p in patterns):
        return Unknown(f"the output of {argv[0]}"), None
    text = it.read_text(it.host_path(files[0], state), state, None, None) if files else stdin
    if "o" not in flags:
        bound = chars_of(text) if text is not None else None
        return Unknown(f"the output of {argv[0]}", chars=None if bound is None else bound | {"\n"}), None
    got: set = set()
    for p in patterns:
        if "F" in flags:
            one = frozenset(p) if "i" not in flags else frozenset(p.lower() + p.upper())
            if "i" in flags and not p.isascii():
                one = None
        elif "P" in flags:
            one = regex_chars(p, fold="i" in flags)
        else:
            rx = _bre(p, "E" in flags or argv[0] == "egrep")
            one = regex_chars(rx, pcre=False, fold="i" in flags) if rx is not None else None
        if one is None:
            return Unknown(f"the output of {argv[0]}"), None
        got |= one
    return Unknown(f"the output of {argv[0]}", chars=frozenset(got) | {"\n"}), None


def _o_which(it: Interpreter, argv, state, stdin):
    """`which NAME`: the path of NAME in a folder of PATH, and a newline (nothing if not found)."""
    names = argv[1:]
    if len(names) != 1 or not isinstance(names[0], str) or names[0].startswith("-") or "/" in names[0]:
        return Unknown("the output of which"), None
    chars = path_lookup_chars(state.get("PATH"), names[0])
    if chars is None:
        return Unknown("the output of which"), None
    return _join_unknown([Unknown(f"where {names[0]} is installed", "", f"/{names[0]}", chars=chars), "\n"]), None


def _o_scontrol(it: Interpreter, argv, state, stdin):
    """`scontrol show hostnames [LIST]`: Slurm's node names, one a line."""
    if len(argv) >= 3 and argv[1] == "show" and argv[2] in ("hostnames", "hostname"):
        return Unknown("the output of scontrol show hostnames", chars=HOST_NAMES), None
    return Unknown("the output of scontrol"), None


def _o_ip(it: Interpreter, argv, state, stdin):
    """`ip route get ADDR`: the route the machine takes, in addresses, keywords and interface
    names (chars.ROUTE_OUTPUT)."""
    words = [w for w in argv[1:] if not (isinstance(w, str) and w in ("-4", "-6"))]
    if len(words) >= 2 and words[0] in ("route", "r", "ro") and words[1] == "get":
        return Unknown("the output of ip route get", chars=ROUTE_OUTPUT), None
    return Unknown(f"the output of {argv[0]}"), None


def _o_hostname(it: Interpreter, argv, state, stdin):
    """`hostname` (and `-s`, `-f`): the machine's name; `-I`: its addresses, blank-separated."""
    flags = argv[1:]
    if not flags or flags in (["-s"], ["-f"], ["--short"], ["--fqdn"]):
        return Unknown("the output of hostname", chars=HOST_NAMES), None
    if flags in (["-I"], ["-i"], ["--all-ip-addresses"], ["--ip-address"]):
        return Unknown("the output of hostname -I", chars=ROUTE_OUTPUT - set("_@-/")), None
    return Unknown(f"the output of {argv[0]}"), None


def _o_awk(it: Interpreter, argv, state, stdin):
    """`awk PROGRAM FILE` over files whose text is known (a repository file), where the program
    prints only fields and its own strings: the characters those fields hold in those files."""
    args = list(argv[1:])
    sep = None
    if args and isinstance(args[0], str) and args[0].startswith("-F"):
        flag = args.pop(0)
        sep = flag[2:] if len(flag) > 2 else (args.pop(0) if args else None)
    if len(args) < 1 or not all(isinstance(a, str) for a in args) or not isinstance(sep, (str, type(None))) \
            or args[0].startswith("-") or any(a.startswith("-") or "=" in a for a in args[1:]):
        # `-f FILE` (the program is in a file), `-v X=1`, `X=1` operands
        return Unknown(f"the output of {argv[0]}"), None
    if len(args) == 1:
        # Standard input: its text, or the characters it can hold (`ip route get ... | awk`).
        texts = [stdin] if isinstance(stdin, str) else \
            stdin.chars if isinstance(stdin, Unknown) and stdin.chars is not None else None
    else:
        texts = [it.read_text(it.host_path(a, state), state, None, None) for a in args[1:]]
    if texts is None or (isinstance(texts, list) and not all(isinstance(t, str) for t in texts)):
        return Unknown(f"the output of {argv[0]}"), None
    got = awk_output(args[0], texts, sep)
    if got is None:
        return Unknown(f"the output of {argv[0]}"), None
    chars, one_line = got
    # A program that prints one line and exits: that line's text and the newline after it.
    return (_join_unknown([Unknown(f"the output of {argv[0]}", chars=chars), "\n"]) if one_line else
            Unknown(f"the output of {argv[0]}", chars=chars | {"\n"})), None


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
    "tr": _o_tr, "cut": _o_cut, "python3": _o_python, "python": _o_python, "paste": _o_paste,
    "grep": _o_grep, "egrep": _o_grep, "scontrol": _o_scontrol, "ip": _o_ip, "hostname": _o_hostname, "which": _o_which, "awk": _o_awk, "gawk": _o_awk, "mawk": _o_awk,
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
