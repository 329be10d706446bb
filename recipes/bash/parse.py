"""Parsing a bash script with tree-sitter-bash: the parser, the repairs of two grammar gaps (`<>`
and a command run on past a newline), the nesting bounds checked before a parse, and running a
query on a tree. The walk over the tree is recipes.bash.walker.
"""
from __future__ import annotations

import re
import threading
from typing import Any

from .model import MAX_BRACKET_DEPTH, MAX_LIST_OPERATORS, MAX_SEPARATORS, Bound

# --------------------------------------------------------------------------- parsing

# One parser per thread: checks run in a thread pool (checks.engine), tree-sitter releases the
# GIL while it parses, and one TSParser used by two threads at once gives broken trees (a trace
# that then ended differently from one run to the next).
_LOCAL = threading.local()


def _parser() -> Any:
    """This thread's tree-sitter bash parser, built on first use (the grammar is a compiled extension)."""
    parser = getattr(_LOCAL, "parser", None)
    if parser is None:
        import tree_sitter
        import tree_sitter_bash

        parser = _LOCAL.parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return parser


# tree-sitter-bash (0.25.1 as well) has no `<>`, the redirect that opens a file for reading and
# writing: `exec 3<>"/dev/tcp/$host/$port"` gives an ERROR at the `>`. Where the grammar failed
# on exactly that operator, it is read as `> ` instead (it does open the file for writing; the
# same length keeps every position) and the text is parsed again.
_READ_WRITE = b"<>"
_AS_WRITE = b"> "


_BRACKETS = re.compile(rb"[(){}]")


def check_nesting(src: bytes) -> None:
    """Raise Bound when `src` is more than a parse and its queries stay fast on: more than
    MAX_SEPARATORS statement ends, more than MAX_BRACKET_DEPTH open `(`/`{` at one point, or
    more than MAX_LIST_OPERATORS `|`,
    `&&` and `||` (counted in the bytes, quotes included: an upper bound, read in C but for
    the brackets of a script that has many)."""
    separators = src.count(b"\n") + src.count(b";")
    if separators > MAX_SEPARATORS:
        raise Bound("MAX_SEPARATORS", MAX_SEPARATORS, f"{separators:,} newlines and `;`", stop=True, line=1)
    operators = src.count(b"|") + src.count(b"&&")
    if operators > MAX_LIST_OPERATORS:
        raise Bound("MAX_LIST_OPERATORS", MAX_LIST_OPERATORS, f"{operators:,} `|`, `&&` and `||` operators",
                    stop=True, line=1)
    if src.count(b"(") + src.count(b"{") <= MAX_BRACKET_DEPTH:
        return
    depth = 0
    for m in _BRACKETS.finditer(src):
        if m.group() in (b"(", b"{"):
            depth += 1
            if depth > MAX_BRACKET_DEPTH:
                line = src.count(b"\n", 0, m.start()) + 1
                raise Bound("MAX_BRACKET_DEPTH", MAX_BRACKET_DEPTH, "the nesting of `(` and `{`", stop=True, line=line)
        elif depth:
            depth -= 1


# The parses of a process, by their bytes: the bash analyses (recipes.bash.walker), the
# interpreter (recipes.launch.shell) and the affected rule read the same files of a review,
# each on its own, and share one parse of each. Bounded in number and in the bytes parsed (a
# tree takes about 15 bytes of memory per byte of text; a review of the history parses 1-2 MB);
# the oldest goes first.
MAX_PARSES = 512
MAX_PARSED_BYTES = 8_000_000
_PARSES: dict[tuple[bytes, bool], tuple[Any, bytes]] = {}
_PARSES_LOCK = threading.Lock()
_PARSED_BYTES = [0]


def parse_bash(src: bytes, *, same_bytes: bool = False) -> tuple[Any, bytes]:
    """(tree, the bytes it was parsed from): `src`, or `src` with each `<>` the grammar could not
    read spelled `> `, and (unless `same_bytes`: every byte offset kept) with a `;` ending each line
    where the grammar ran a command on past an unescaped newline (`_run_on_lines`); every line
    keeps its number. Raises Bound when `src` nests too deep to parse in bounded time.
    The answer for the same bytes is the same tree (shared by every caller: read it, never edit it)."""
    key = (src, same_bytes)
    hit = _PARSES.get(key)
    if hit is not None:
        return hit
    # Both readings start from the parse that keeps every byte offset: a text with no run-on
    # line has one tree for both.
    parsed = _parse(src) if same_bytes else _repair_run_ons(parse_bash(src, same_bytes=True))
    with _PARSES_LOCK:
        while _PARSES and (len(_PARSES) >= MAX_PARSES or _PARSED_BYTES[0] + len(src) > MAX_PARSED_BYTES):
            _PARSED_BYTES[0] -= len(_PARSES.pop(next(iter(_PARSES)))[1])
        if key not in _PARSES:
            _PARSES[key] = parsed
            _PARSED_BYTES[0] += len(parsed[1])
    return _PARSES.get(key, parsed)


def _parse(src: bytes) -> tuple[Any, bytes]:
    """The tree of `src` with each `<>` the grammar could not read spelled `> ` (same length)."""
    check_nesting(src)
    tree = _parser().parse(src)
    if tree.root_node.has_error and _READ_WRITE in src:
        spots = [n.start_byte for n in _errors(tree.root_node)
                 if src[n.start_byte - 1:n.start_byte + 1] == _READ_WRITE]
        if spots:
            patched = bytearray(src)
            for at in spots:
                patched[at - 1:at + 1] = _AS_WRITE
            src = bytes(patched)
            tree = _parser().parse(src)
    return tree, src


def _repair_run_ons(parsed: tuple[Any, bytes]) -> tuple[Any, bytes]:
    """The tree and bytes with a `;` ending each run-on line (`_run_on_lines`), parsed again;
    the same pair when there is none."""
    tree, src = parsed
    repaired = False
    for _ in range(MAX_RUN_ON_REPAIRS):
        ends = _run_on_lines(tree.root_node, src)
        if not ends:
            break
        patched = bytearray(src)
        for at in sorted(ends, reverse=True):
            patched[at:at] = b";"
        src = bytes(patched)
        tree = _parser().parse(src)
        repaired = True
    return (tree, src) if repaired else parsed


# A silent misparse of the grammar (no error node): in the AMD job.slurm (#2216 era, and its
# job_agentic.slurm) the `sed 's/^/  - /'` closing a pipeline at line 48 took the next 27 lines
# (`fi`, `RUN_FILE="server.sh"`, ...) as its arguments, so the `if` at line 45 ran to line 82.
# bash ends a command at a newline that no backslash escapes, so a `;` there changes nothing.
MAX_RUN_ON_REPAIRS = 8
_ARGUMENT_NODES = frozenset({
    "word", "string", "raw_string", "concatenation", "number", "simple_expansion", "expansion",
    "command_substitution", "ansi_c_string", "translated_string", "arithmetic_expansion", "comment",
})


def _run_on_lines(root: Any, src: bytes) -> list[int]:
    """Byte offsets just after the last argument of a line where a command's next argument sits
    on a later line with no backslash-newline between (and only blanks or a comment after it)."""
    ends: list[int] = []
    for node in _captures(root, "(command) @c").get("c", ()):
        if node.end_point[0] == node.start_point[0]:
            continue
        kids = node.named_children
        for prev, nxt in zip(kids, kids[1:]):
            if nxt.start_point[0] == prev.end_point[0] or prev.type not in _ARGUMENT_NODES \
                    or nxt.type not in _ARGUMENT_NODES or prev.type == "comment":
                continue
            between = src[prev.end_byte:nxt.start_byte].replace(b"\\\n", b"")
            newline = between.find(b"\n")
            if newline < 0:
                continue
            rest = between[:newline].strip()
            if not rest or rest.startswith(b"#"):
                ends.append(prev.end_byte)
                break  # the rest of this command is read again after the repair
    return ends


def _errors(node: Any) -> list[Any]:
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" and n.start_byte > 0:
            out.append(n)
        stack.extend(c for c in n.children if c.has_error or c.type == "ERROR")
    return out


_QUERIES: dict[str, Any] = {}


def _captures(node: Any, source: str) -> dict[str, list[Any]]:
    """The nodes a tree-sitter query captures under `node`, by capture name (found in C, not
    by visiting every node from Python)."""
    import tree_sitter

    query = _QUERIES.get(source)
    if query is None:
        query = _QUERIES[source] = tree_sitter.Query(_parser().language, source)
    if hasattr(tree_sitter, "QueryCursor"):  # 0.25 moved running a query onto a cursor
        return tree_sitter.QueryCursor(query).captures(node)
    return query.captures(node)
