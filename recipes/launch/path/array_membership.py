"""A change confined to a list the script only tests for membership (rule 4 of recipes.launch.path.launch_path,
narrowed for this one shape).

InferenceX #2227 removed one element from launch_b300-nv.sh's single-node `STAGED_MODELS`:

    STAGED_MODELS=(
        Kimi-K2.6
        Kimi-K2.6-NVFP4        <- removed
        MiniMax-M2.5
    )
    MODEL_BASENAME="${MODEL##*/}"
    if [[ " ${STAGED_MODELS[*]} " == *" ${MODEL_BASENAME} "* ]]; then

A top-level change affects every point whose path holds the file, yet this one changes what
runs only for a point whose `MODEL_BASENAME` is that element: with plain-word elements (no
space, quote, expansion or glob character), the default `IFS` and a plain-word subject, the test
is true exactly when the subject equals an element. So when the PR changes nothing of the file
but the elements of such arrays (`list_edits`), a point is affected only when its subject, read
for it (recipes.launch.path.shell_scope, as the runner-chosen chains read variables), is in the symmetric
difference of the base and head elements (`list_reasons`).

Anything else keeps the rule's answer (the point is affected): the array read in any other way
(a loop, `"${NAME[@]}"` passed to a command, `${#NAME[@]}`, another assignment or `+=`, a test in
a function or a loop), an element or a subject the bot cannot read as one plain word, a subject
set other than by a plain top-level assignment, `IFS` named anywhere, a file the point's path may
`source` (it could read or change the array), or a file another file of the path runs. The
history holds one such list (measured on the 1,970 first-parent commits of InferenceX up to
#2707): STAGED_MODELS, whose only read has always been the test above; 8 of the 24 commits that
changed launch_b300-nv.sh since it was added (#1539) changed only its elements.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from recipes.launch.path.conditions import evaluate_condition
from recipes.launch.path.shell_scope import RootLookup, Scope, Stop
from recipes.bash.model import Bound
from recipes.bash.parse import _captures, parse_bash

# One element, or a subject's value, that the membership test compares as written.
PLAIN_WORD = re.compile(r"[A-Za-z0-9_.+\-/:@%,=]+")
# `" ${NAME[*]} " == *" ${X} "*` (or `[@]`, `=`, `!=`, `$X`): true exactly when X is an element.
_MEMBER = re.compile(r'" \$\{(?P<name>[A-Za-z_]\w*)\[[*@]\]\} "\s*(?:==|=|!=)\s*'
                     r'\*" \$(?:\{(?P<braced>[A-Za-z_]\w*)\}|(?P<bare>[A-Za-z_]\w*)) "\*')
_QUERY = ("(comment) @comment (variable_assignment) @assign (binary_expression) @test "
          "(variable_name) @var (function_definition) @function")
_LOOPS = frozenset({"for_statement", "c_style_for_statement", "while_statement"})
_READS = frozenset({"simple_expansion", "expansion"})  # `$X`, `${X...}`: a read of X
SOURCE_COMMANDS = frozenset({"source", "."})
REASON = "`{name}` {how} this point's `{subject}`, {value}"


@dataclass(frozen=True)
class MemberTest:
    """A membership test of the array: its line and the variable it looks up."""

    line: int
    subject: str


@dataclass(frozen=True)
class ListEdit:
    """One array whose elements alone the PR changed, read only by membership tests."""

    name: str
    removed: frozenset[str]
    added: frozenset[str]
    tests: tuple[MemberTest, ...]  # at the head


@dataclass(frozen=True)
class _Array:
    name: str
    elements: tuple[str, ...]
    node: Any
    interior: tuple[int, int]  # bytes between `(` and `)`


@dataclass
class _Script:
    """What the rule reads of one version of the file."""

    src: bytes
    skeleton: list[str]  # code lines, comments and every array's elements left out
    arrays: list[_Array]
    captured: dict[str, list[Any]]
    comments: list[tuple[int, int]]


def list_edits(old: str, new: str) -> tuple[ListEdit, ...]:
    """The arrays a change of a script is confined to, when it changes nothing else and each is
    read only by membership tests (at the base and at the head); () otherwise."""
    base, head = _read(old), _read(new)
    if base is None or head is None or base.skeleton != head.skeleton or len(base.arrays) != len(head.arrays):
        return ()
    out: list[ListEdit] = []
    for was, now in zip(base.arrays, head.arrays):
        if was.elements == now.elements:
            continue
        tests = _membership_tests(head, now)
        if tests is None or _membership_tests(base, was) is None:
            return ()
        out.append(ListEdit(now.name, frozenset(was.elements) - frozenset(now.elements),
                            frozenset(now.elements) - frozenset(was.elements), tests))
    return tuple(out)


def list_reasons(edits: tuple[ListEdit, ...], path: str, analysis: Any, env: dict[str, str]) -> list[str] | None:
    """Why the edits affect a point with these variables ([]: they change no test's outcome for
    it); None when the rule cannot tell (the point stays affected as before)."""
    if not edits or analysis is None or _may_source(analysis, env):
        return None
    scope = Scope(path, analysis, None, RootLookup(env))
    out: list[str] = []
    for edit in edits:
        for test in edit.tests:
            try:
                value = scope.value(test.subject, test.line)
            except Stop:
                return None
            if value is None or not PLAIN_WORD.fullmatch(value):
                return None
            how = "no longer lists" if value in edit.removed else "now lists" if value in edit.added else None
            if how is not None:
                out.append(REASON.format(name=edit.name, how=how, subject=test.subject, value=value))
    return list(dict.fromkeys(out))


def _may_source(analysis: Any, env: dict[str, str]) -> bool:
    """Whether the file may `source` another for the point: that file shares the shell, so it
    could read or change the array or the subject unseen."""
    return any(c.argv and c.argv[0] in SOURCE_COMMANDS
               and (c.function is not None or not c.condition or evaluate_condition(c.condition, env) is not False)
               for c in analysis.commands)


def _read(text: str) -> _Script | None:
    """The arrays of a script and its code without them (None: not cleanly readable)."""
    src = text.encode("utf-8", "surrogatepass")
    try:
        root = parse_bash(src, same_bytes=True)[0].root_node
    except (Bound, RecursionError, ValueError, TypeError, AttributeError):  # as recipes.scripts.code_units
        return None
    if root.has_error:
        return None
    found = _captures(root, _QUERY)
    comments = [(n.start_byte, n.end_byte) for n in found.get("comment", [])]
    arrays = sorted((a for a in map(_array, found.get("assign", [])) if a is not None), key=lambda a: a.interior)
    holes = sorted(comments + [a.interior for a in arrays])
    kept, at = [], 0
    for start, end in holes:
        if start >= at:
            kept.append(src[at:start])
            at = end
    kept.append(src[at:])
    code = b"".join(kept).decode("utf-8", "replace")
    skeleton = [ln.strip() for ln in code.split("\n") if ln.strip()]
    return _Script(src, skeleton, arrays, found, comments)


def _array(node: Any) -> _Array | None:
    value = node.child_by_field_name("value")
    name = node.child_by_field_name("name")
    if value is None or value.type != "array" or name is None:
        return None
    kids = value.children
    if len(kids) < 2 or kids[0].type != "(" or kids[-1].type != ")":
        return None
    elements = tuple(c.text.decode("utf-8", "replace") for c in value.named_children if c.type != "comment")
    return _Array(name.text.decode("utf-8", "replace"), elements, node, (kids[0].end_byte, kids[-1].start_byte))


def _membership_tests(script: _Script, array: _Array) -> tuple[MemberTest, ...] | None:
    """The array's membership tests, when they are its only reads and it is assigned once, at the
    top level, to plain words; None otherwise."""
    if any(c.type == "+=" for c in array.node.children) or _inside(array.node, {"function_definition"}):
        return None
    if not all(PLAIN_WORD.fullmatch(e) for e in array.elements) or re.search(rb"\bIFS\b", _code(script)):
        return None
    tests: list[MemberTest] = []
    allowed = {array.node.child_by_field_name("name").start_byte}
    for node in script.captured.get("test", []):
        m = _MEMBER.fullmatch(node.text.decode("utf-8", "replace"))
        if m is None or m.group("name") != array.name:
            continue
        subject = m.group("braced") or m.group("bare")
        if not _in_double_brackets(node) or _inside(node, _LOOPS | {"function_definition"}) \
                or not _plainly_assigned(script, subject):
            return None
        tests.append(MemberTest(node.start_point[0] + 1, subject))
        allowed.add(node.start_byte + node.text.index(b"${") + 2)
    if not tests or set(_occurrences(script, array.name, array.interior)) != allowed:
        return None
    return tuple(tests)


def _plainly_assigned(script: _Script, name: str) -> bool:
    """Whether every mention of `name` is a read or a plain top-level assignment of a word (no
    `read`, loop, function, command prefix or array): what the scope's lookup models."""
    nodes = {n.start_byte: n for n in script.captured.get("var", []) if n.text == name.encode()}
    for at in _occurrences(script, name, None):
        node = nodes.get(at)
        if node is None:
            return False
        parent = node.parent
        if parent.type in _READS:
            continue
        value = parent.child_by_field_name("value") if parent.type == "variable_assignment" else None
        if parent.type != "variable_assignment" or parent.parent.type == "command" \
                or (value is not None and value.type == "array") or _inside(parent, {"function_definition"}):
            return False
    return True


def _occurrences(script: _Script, name: str, skip: tuple[int, int] | None) -> list[int]:
    """Byte offsets of `name` as a whole word outside comments (and outside `skip`)."""
    holes = script.comments + ([skip] if skip else [])
    return [m.start() for m in re.finditer(rb"(?<![\w])" + re.escape(name.encode()) + rb"(?![\w])", script.src)
            if not any(a <= m.start() < b for a, b in holes)]


def _code(script: _Script) -> bytes:
    return "\n".join(script.skeleton).encode("utf-8")


def _inside(node: Any, kinds: set[str] | frozenset[str]) -> bool:
    node = node.parent
    while node is not None:
        if node.type in kinds:
            return True
        node = node.parent
    return False


def _in_double_brackets(node: Any) -> bool:
    """Whether the comparison is inside `[[ ]]`, where `==` matches a pattern (in `[ ]` the
    right side would be expanded as a file name)."""
    node = node.parent
    while node is not None and node.type != "test_command":
        if node.type not in ("binary_expression", "parenthesized_expression", "unary_expression"):
            return False
        node = node.parent
    return node is not None and bool(node.children) and node.children[0].type == "[["
