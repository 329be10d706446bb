"""A function that calls itself from the state its active call started from: the names such a
call can assign outside its own `local`s, read from its text (`assigned_names`), so that the
call need not be interpreted again (`shell.Interpreter.call_function`).

The reading fails closed: None when the text can assign a name it does not spell (`printf -v
"$name"`, `declare -n`, `eval`, `source`, a command whose name is not literal, arithmetic over
an expansion) or change the process otherwise (`cd`, `trap`, `set`, `alias`, a function it
defines); the caller then interprets the call as before."""
from __future__ import annotations

from typing import Any, Optional

# Builtins that change the process beyond its variables, assign names their text does not spell,
# or unset one (an unknown value is not "unset").
_NOT_READ = frozenset({"eval", "source", ".", "trap", "alias", "unalias", "shopt", "set", "cd", "pushd",
                       "popd", "let", "enable", "builtin", "exec", "hash", "unset"})
# Builtins whose literal arguments are the names they assign (and what they assign unnamed).
_NAMES_ARGS = {"read": ("REPLY",), "mapfile": ("MAPFILE",), "readarray": ("MAPFILE",),
               "getopts": ("OPTARG", "OPTIND")}
_LITERAL = frozenset({"word", "raw_string", "number", "variable_name"})
_ARITH_ASSIGN = frozenset({"=", "+=", "-=", "*=", "/=", "%=", "<<=", ">>=", "&=", "^=", "|=", "++", "--"})


class _Unread(Exception):
    """The text may assign or change what this reading cannot name."""


def assigned_names(name: str, functions: dict[str, Any]) -> Optional[frozenset[str]]:
    """The variables a call of function `name` (and of the functions it calls) can assign that
    outlive it: every name it assigns, less those its body declares `local` before any other
    statement. None when the text cannot say (above)."""
    out: set[str] = set()
    try:
        _function(name, functions, out, set())
    except _Unread:
        return None
    return frozenset(out)


def _text(fn: Any, node: Any) -> str:
    return fn.src[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _function(name: str, functions: dict[str, Any], out: set[str], seen: set[str]) -> None:
    if name in seen:
        return
    seen.add(name)
    fn = functions[name]
    assigned: set[str] = set()
    _walk(fn, fn.node, functions, assigned, seen, out)
    out.update(assigned - _leading_locals(fn))


def _leading_locals(fn: Any) -> set[str]:
    """The names the body declares local (`local x`, `declare x`) before any other statement."""
    names: set[str] = set()
    for stmt in fn.node.named_children:
        if stmt.type == "comment":
            continue
        if stmt.type != "declaration_command" or not stmt.children or stmt.children[0].type not in (
                "local", "declare", "typeset"):
            break
        words = [c for c in stmt.named_children]
        if any(c.type == "word" and _text(fn, c).startswith("-") and "g" in _text(fn, c) for c in words):
            break
        for c in words:
            if c.type == "variable_assignment":
                target = c.child_by_field_name("name")
                if target is not None and target.type == "variable_name":
                    names.add(_text(fn, target))
            elif c.type == "variable_name":
                names.add(_text(fn, c))
    return names


def _walk(fn: Any, node: Any, functions: dict[str, Any], names: set[str], seen: set[str], out: set[str]) -> None:
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t in ("function_definition", "unset_command"):
            raise _Unread()
        if t == "variable_assignment":
            names.add(_target(fn, n.child_by_field_name("name")))
        elif t == "declaration_command":
            _declaration(fn, n, names)
        elif t == "for_statement":
            var = n.child_by_field_name("variable")
            if var is not None:
                names.add(_text(fn, var))
        elif t == "expansion":
            _expansion(fn, n, names)
        elif t in ("arithmetic_expansion", "c_style_for_statement") or (
                t == "compound_statement" and n.children and n.children[0].type == "(("):
            _arithmetic(fn, n, names)
        elif t == "command":
            _command(fn, n, functions, names, seen, out)
        stack.extend(n.children)


def _target(fn: Any, node: Any) -> str:
    if node is not None and node.type == "subscript":
        node = node.named_children[0] if node.named_children else None
    if node is None or node.type != "variable_name":
        raise _Unread()
    return _text(fn, node)


def _declaration(fn: Any, node: Any, names: set[str]) -> None:
    head = node.children[0].type if node.children else ""
    for c in node.named_children:
        text = _text(fn, c)
        if head == "export" or (c.type == "word" and text.startswith("-") and "x" in text):
            raise _Unread()  # whether a name is exported after the call: not kept here
        if c.type == "word" and text.startswith(("-", "+")):
            if "n" in text:
                raise _Unread()  # a name reference
        elif c.type == "variable_assignment":
            names.add(_target(fn, c.child_by_field_name("name")))
        elif c.type in ("variable_name", "word"):
            names.add(text)
        else:
            raise _Unread()  # `declare "$name=..."`


def _expansion(fn: Any, node: Any, names: set[str]) -> None:
    """`${x:=default}` and `${x=default}` assign x."""
    kids = node.children
    ops = [c.type for c in kids if not c.is_named]
    if not any(op in (":=", "=") for op in ops):
        return
    if any(op == "!" for op in ops):
        raise _Unread()
    var = next((c for c in kids if c.type in ("variable_name", "subscript")), None)
    names.add(_target(fn, var))


def _arithmetic(fn: Any, node: Any, names: set[str]) -> None:
    """Arithmetic that assigns (`(( n += 1 ))`, `$((i++))`): every name in it, over-approximated;
    an expansion in arithmetic that assigns may name any variable."""
    found: list[Any] = []
    assigns = False
    expands = False
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in _ARITH_ASSIGN and not n.is_named:
            assigns = True
        elif n.type == "variable_name":
            found.append(n)
        elif n.type in ("simple_expansion", "expansion", "command_substitution"):
            expands = True
            continue
        stack.extend(n.children)
    if assigns:
        if expands:
            raise _Unread()
        names.update(_text(fn, v) for v in found)


def _command(fn: Any, node: Any, functions: dict[str, Any], names: set[str], seen: set[str], out: set[str]) -> None:
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return
    head = name_node.named_children[0] if name_node.named_children else name_node
    if head.type not in _LITERAL:
        raise _Unread()  # `"$cmd" ...`: any function, any builtin
    cmd = _text(fn, head)
    args = [c for c in node.named_children if c.type not in ("command_name",
        "variable_assignment", "file_redirect", "heredoc_redirect", "herestring_redirect", "comment")]
    if cmd in _NOT_READ or (cmd == "command" and any(
            a.type in _LITERAL and (_text(fn, a) in _NOT_READ or _text(fn, a) in _NAMES_ARGS or _text(fn, a) == "printf")
            for a in args)):
        raise _Unread()
    if cmd in functions:
        _function(cmd, functions, out, seen)
    elif cmd in _NAMES_ARGS:
        names.update(_NAMES_ARGS[cmd])
        for a in args:
            if a.type not in _LITERAL:
                raise _Unread()  # `read "$var"`, `read -p "$prompt"`: not read here
            text = _text(fn, a)
            if not text.startswith("-"):
                names.add(text.split("[", 1)[0])
    elif cmd == "printf":
        texts = [(_text(fn, a) if a.type in _LITERAL else None) for a in args]
        for i, text in enumerate(texts):
            if text == "-v":
                if i + 1 >= len(texts) or texts[i + 1] is None:
                    raise _Unread()
                names.add(texts[i + 1].split("[", 1)[0])
