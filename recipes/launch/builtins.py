"""The shell builtins the interpreter evaluates itself (`cd`, `export`, `read`, `eval`, ...)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Optional

from .state import (
    _KEEP,
    _NAME,
    BUILTINS,
    MAX_ARRAY,
    Ctx,
    State,
    _Exit,
    _intersperse,
    _join_unknown,
    _Loop,
    _Return,
    _scalar,
    one_of_arrays,
)
from .chars import path_lookup_chars
from .text import _ansi_c, _printf, _split
from .words import Installed, OneOfRest, Rest, Unknown, Word, unclassed

if TYPE_CHECKING:
    from .shell import Interpreter


def _b_cd(self: Interpreter, argv, state: State, ctx, node, stdin, out):
    args = [a for a in argv[1:] if not (isinstance(a, str) and a in ("-P", "-L", "-e", "--"))]
    target: Word = args[0] if args else (state.get("HOME") or "/root")
    if argv[0] == "popd":
        state.cwd = state.dirstack.pop() if state.dirstack else Unknown("popd with an empty stack")
        return 0
    if target == "-":
        state.cwd = _scalar(state.get("OLDPWD")) if state.get("OLDPWD") is not None else Unknown("cd -")
        return 0
    if argv[0] == "pushd":
        state.dirstack.append(state.cwd)
    old = state.cwd
    state.cwd = self.local_path(target, state)
    state.set("OLDPWD", old)
    state.set("PWD", state.cwd)
    if isinstance(state.cwd, str):
        exists = self.files.exists(state.cwd)
        return None if exists is None else (0 if exists else 1)
    return None


def _b_pwd(self, argv, state, ctx, node, stdin, out):
    if out is not None:
        out.write(_join_unknown([state.cwd, "\n"]) if isinstance(state.cwd, str) else state.cwd)
    return 0


def _b_echo(self, argv, state, ctx, node, stdin, out):
    args = list(argv[1:])
    newline, escapes = True, False
    while args and isinstance(args[0], str) and re.fullmatch(r"-[neE]+", args[0]):
        flags = args.pop(0)
        newline = newline and "n" not in flags
        escapes = "e" in flags
    if out is not None:
        text = _join_unknown(_intersperse(args, " "))
        if escapes and isinstance(text, str):
            text = _ansi_c(text)
        elif escapes:
            text = unclassed(text)  # `\x27` in it is a quote
        out.write(_join_unknown([text, "\n" if newline else ""]))
    return 0


def _b_printf(self, argv, state, ctx, node, stdin, out):
    args = list(argv[1:])
    target = None
    if len(args) >= 2 and args[0] == "-v":
        target = args[1]
        args = args[2:]
    if args and args[0] == "--":
        args = args[1:]
    text = _printf(args) if args else ""
    if target is not None:
        if isinstance(target, Unknown):
            self.unknown(ctx, node, state, "printf -v into a variable whose name is not known")
            return None
        m = re.fullmatch(r"([A-Za-z_]\w*)(?:\[(.*)\])?", target)
        if not m:
            return 1
        if m.group(2) is not None:
            cur = state.get(m.group(1))
            seq = list(cur) if isinstance(cur, list) else []
            i = self.arith(m.group(2), state, ctx, node)
            if i is None or i > MAX_ARRAY:
                state.set(m.group(1), Unknown("printf -v into an element"))
            else:
                while len(seq) <= i:
                    seq.append("")
                seq[i] = text
                state.set(m.group(1), seq)
        else:
            state.set(m.group(1), text)
        return 0
    if out is not None:
        out.write(text)
    return 0


def _b_export(self, argv, state, ctx, node, stdin, out):
    # Reached for `export` written as a plain command word (`builtin export X=1`, `command export`).
    return self.declare(argv[0], [], state, ctx, node) if len(argv) == 1 else _declare_words(self, argv, state, ctx, node)


def _declare_words(self: Interpreter, argv, state: State, ctx: Ctx, node) -> int:
    head = argv[0]
    flags = ""
    export = True if head == "export" else None
    local = head == "local" or (head in ("declare", "typeset") and ctx.function != "")
    for w in argv[1:]:
        if isinstance(w, Unknown):
            self.unknown(ctx, node, state, f"`{head}` of words the interpreter cannot know")
            continue
        if w.startswith(("-", "+")) and len(w) > 1 and "=" not in w:
            flags += w[1:] if w.startswith("-") else ""
            continue
        name, eq, value = w.partition("=")
        if not _NAME.match(name):
            continue
        if eq:
            state.set(name, value, local=local, export=export if export else ("x" in flags or None))
        else:
            state.set(name, _KEEP if state.lookup(name) else "", local=local and state.frames[-1].get(name) is None,
                      export=export if export else ("x" in flags or None))
    return 0


def _b_unset(self, argv, state, ctx, node, stdin, out):
    for w in argv[1:]:
        if isinstance(w, str) and not w.startswith("-"):
            state.unset(w.split("[", 1)[0])
    return 0


def _b_set(self, argv, state, ctx, node, stdin, out):
    args = list(argv[1:])
    if "--" in args:
        state.positional = args[args.index("--") + 1:]
        return 0
    if args and isinstance(args[0], str) and not args[0].startswith(("-", "+")):
        state.positional = args
    return 0


def _b_shopt(self, argv, state, ctx, node, stdin, out):
    args = list(argv[1:])
    if "expand_aliases" in args:
        state.expand_aliases = "-s" in args
    return 0


def _b_shift(self, argv, state, ctx, node, stdin, out):
    n = 1
    if len(argv) > 1:
        n = self.arith(argv[1], state, ctx, node) or 0
    last = state.positional[-1] if state.positional else None
    if isinstance(last, OneOfRest):
        # Each arm's arguments shift on their own (a shift past the end leaves them, and fails).
        runs = [state.positional[:-1] + list(t) for t in last.values]
        state.positional = one_of_arrays([r[n:] if n <= len(r) else r for r in runs], last.why, last.label)
        statuses = {int(n > len(r)) for r in runs}
        return statuses.pop() if len(statuses) == 1 else None
    rest = state.positional[-1:] if isinstance(last, Rest) else []
    state.positional = state.positional[n:] or rest  # past the known words, how many are left is unknown
    return 0


def _b_source(self: Interpreter, argv, state: State, ctx: Ctx, node, stdin, out):
    if len(argv) < 2:
        return 1
    host = self.known_path(self.host_path(argv[1], state), ctx)
    text = self.script_text(host, state, ctx, node, "sources")
    if text is None:
        return None
    label = self.label(host)
    saved = state.positional
    if len(argv) > 2:
        state.positional = list(argv[2:])
    inner = ctx.deeper(ctx.site(node), f"source {label}", local=self.local_path(argv[1], state))
    def run() -> Optional[int]:
        self.run_text(text, label, state, inner)
        return state.status
    pad = self.pad("source")
    try:
        ending, status = self.run_in(pad, run, state, f"set on a path that returned early from {label}")
        return self.returned(pad, state, ending != "dead", status)
    finally:
        self.unpad(pad)
        if len(argv) > 2:
            state.positional = saved


def _b_eval(self: Interpreter, argv, state: State, ctx: Ctx, node, stdin, out):
    text = _join_unknown(_intersperse(argv[1:], " "))
    if isinstance(text, Unknown):
        filled, why = self.readable(text, state)
        if filled is None:
            self.unknown(ctx, node, state, f"eval of text that is not known ({why})", code=text)
            return None
        text = filled
    site = ctx.site(node)
    self.run_text(text, f"{site.path}:{site.line} (eval)", state, ctx.deeper(site, "eval"))
    return state.status


def _b_exec(self: Interpreter, argv, state: State, ctx: Ctx, node, stdin, out):
    if len(argv) == 1:
        return 0  # `exec 3>file`: redirections only
    args = list(argv[1:])
    while args and isinstance(args[0], str) and args[0] in ("-c", "-l", "-a"):
        args = args[2:] if args[0] == "-a" else args[1:]
    status = self.run_argv(args, [], state, ctx, node, stdin=stdin, out=out, functions=False)
    raise _Exit(status, ctx.site(node))


def _b_exit(self, argv, state, ctx, node, stdin, out):
    code = self.arith(argv[1], state, ctx, node) if len(argv) > 1 else state.status
    raise _Exit(code, ctx.site(node))


def _b_return(self, argv, state, ctx, node, stdin, out):
    code = self.arith(argv[1], state, ctx, node) if len(argv) > 1 else state.status
    raise _Return(code)


def _b_loop(self, argv, state, ctx, node, stdin, out):
    n = self.arith(argv[1], state, ctx, node) if len(argv) > 1 else 1
    raise _Loop(argv[0], n or 1)


def _b_read(self: Interpreter, argv, state: State, ctx: Ctx, node, stdin, out):
    args = list(argv[1:])
    names: list[str] = []
    array: Optional[str] = None
    delim = "\n"
    i = 0
    while i < len(args):
        a = args[i]
        if isinstance(a, Unknown):
            self.unknown(ctx, node, state, "read into a variable whose name is not known")
            return None
        if a == "-a" and i + 1 < len(args):
            array = args[i + 1] if isinstance(args[i + 1], str) else None
            i += 2
            continue
        if a == "-d" and i + 1 < len(args):
            delim = args[i + 1] if isinstance(args[i + 1], str) else "\n"
            i += 2
            continue
        if a in ("-p", "-t", "-n", "-N", "-u", "-i") and i + 1 < len(args):
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        names.append(a)
        i += 1
    if not names and array is None:
        names = ["REPLY"]
    if not isinstance(stdin, str):
        why = stdin.why if isinstance(stdin, Unknown) else "its input is not known"
        for n in names + ([array] if array else []):
            state.set(n, Unknown(f"read at {ctx.site(node)}: {why}"))
        return None
    line = stdin.split(delim or "\0", 1)[0] if delim else stdin
    ifs = _scalar(state.get("IFS")) if state.get("IFS") is not None else " \t\n"
    if isinstance(ifs, Unknown):
        for n in names:
            state.set(n, Unknown("read with an unknown IFS"))
        return None
    if array is not None:
        state.set(array, _split(line, ifs))
        return 0
    fields = _split(line, ifs, maxsplit=len(names) - 1) if names else []
    for j, n in enumerate(names):
        state.set(n, fields[j] if j < len(fields) else "")
    return 0 if stdin else 1


def _b_mapfile(self: Interpreter, argv, state: State, ctx: Ctx, node, stdin, out):
    args = [a for a in argv[1:]]
    name = "MAPFILE"
    strip = False
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-t":
            strip = True
        elif a in ("-d", "-n", "-O", "-s", "-u", "-C", "-c") and i + 1 < len(args):
            i += 1
        elif isinstance(a, str) and not a.startswith("-"):
            name = a
        i += 1
    if not isinstance(stdin, str):
        state.set(name, Unknown(f"{argv[0]} at {ctx.site(node)} read input that is not known"))
        return None
    lines = stdin.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not strip:
        lines = [ln + "\n" for ln in lines]
    if len(lines) > MAX_ARRAY:
        state.set(name, Unknown(f"{argv[0]} of over {MAX_ARRAY:,} lines"))
        return None
    state.set(name, lines)
    return 0


def _b_let(self, argv, state, ctx, node, stdin, out):
    value = None
    for expr in argv[1:]:
        value = self.arith(expr, state, ctx, node)
    return None if value is None else int(value == 0)


def _b_alias(self, argv, state, ctx, node, stdin, out):
    for w in argv[1:]:
        if isinstance(w, Unknown):
            self.unknown(ctx, node, state, "an alias the interpreter cannot know")
            continue
        name, eq, text = w.partition("=")
        if eq:
            state.aliases[name] = text
    return 0


def _b_unalias(self, argv, state, ctx, node, stdin, out):
    for w in argv[1:]:
        if isinstance(w, str):
            state.aliases.pop(w, None)
    return 0


def _b_trap(self, argv, state, ctx, node, stdin, out):
    if len(argv) >= 3:
        for sig in argv[2:]:
            if isinstance(sig, str):
                state.traps[sig.upper().removeprefix("SIG")] = (argv[1], ctx.site(node))
    return 0


def _b_true(self, argv, state, ctx, node, stdin, out):
    return 0


def _b_false(self, argv, state, ctx, node, stdin, out):
    return 1


def _b_test(self, argv, state, ctx, node, stdin, out):
    v = self.test_argv(list(argv[1:]), state)
    return None if v is None else int(not v)


_PROGRAM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def _b_command(self: Interpreter, argv, state: State, ctx: Ctx, node, stdin, out):
    args = list(argv[1:])
    if args and args[0] in ("-v", "-V"):
        name = args[1] if len(args) > 1 else None
        if out is not None:
            if isinstance(name, str) and args[0] == "-v" and (name in state.functions or name in BUILTINS):
                out.write(f"{name}\n")  # a function or a builtin: bash prints its name
            elif isinstance(name, str) and _PROGRAM.fullmatch(name):
                out.write(Installed(f"where {name} is installed", "", f"/{name}", chars=path_lookup_chars(state.get("PATH"), name)))
            else:
                out.write(Unknown("where a command is installed"))
        return None  # whether a program is installed is the image's business
    while args and args[0] == "-p":
        args = args[1:]
    if argv[0] == "builtin":
        return self.run_argv(args, [], state, ctx, node, stdin=stdin, out=out, functions=False)
    return self.run_argv(args, [], state, ctx, node, stdin=stdin, out=out, functions=False)


def _b_type(self, argv, state, ctx, node, stdin, out):
    if out is not None:
        out.write(Unknown("`type`/`hash` output"))
    return None


def _b_getopts(self, argv, state, ctx, node, stdin, out):
    if len(argv) >= 3 and isinstance(argv[2], str):
        state.set(argv[2], Unknown("an option getopts reads"))
    return None


def _b_noop(self, argv, state, ctx, node, stdin, out):
    return 0


_BUILTINS: dict[str, Callable[..., Optional[int]]] = {
    "cd": _b_cd, "pushd": _b_cd, "popd": _b_cd, "pwd": _b_pwd, "echo": _b_echo, "printf": _b_printf,
    "export": _b_export, "declare": _b_export, "typeset": _b_export, "local": _b_export, "readonly": _b_export,
    "unset": _b_unset, "set": _b_set, "shopt": _b_shopt, "shift": _b_shift, "source": _b_source, ".": _b_source,
    "eval": _b_eval, "exec": _b_exec, "exit": _b_exit, "logout": _b_exit, "return": _b_return,
    "break": _b_loop, "continue": _b_loop, "read": _b_read, "mapfile": _b_mapfile, "readarray": _b_mapfile,
    "let": _b_let, "alias": _b_alias, "unalias": _b_unalias, "trap": _b_trap, "true": _b_true, ":": _b_true,
    "false": _b_false, "test": _b_test, "[": _b_test, "command": _b_command, "builtin": _b_command,
    "type": _b_type, "hash": _b_noop, "getopts": _b_getopts,
}
