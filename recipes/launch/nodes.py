"""What the interpreter reads of a syntax node without the state (`recipes.launch.plans.plan`
keeps each answer per node): a statement's lines, a command's parts, a word's texts."""
from __future__ import annotations

from typing import Any, Optional

from .reached import node_lines
from .state import _SKIP, MAX_FIELDS, _join_unknown, _short
from .text import _brace_expand, _unescape_dq, _unescape_word
from .words import Unknown, Word

# Statements whose headers (a `for` loop's words, a `case`'s value) run with their first line.
_HEADED = frozenset({"for_statement", "c_style_for_statement", "case_statement"})


def _all_lines(node: Any, src: bytes) -> range:
    """The lines of a statement."""
    first, last = node_lines(node)
    return range(first, last + 1)


def _end_lines(node: Any, src: bytes) -> tuple[int, ...]:
    """The first and last lines of a compound statement; of a `for` loop's or a `case`'s, the
    lines up to its body too (its words, its value)."""
    first, last = node_lines(node)
    if node.type in _HEADED:
        body = node.child_by_field_name("body") or node.child_by_field_name("value")
        if body is not None:
            return (first, last, *range(first, body.start_point[0] + 2))
    return first, last


# Statements whose inner statements are evaluated (and recorded) one by one: their first and
# last lines are what running them runs.
_COMPOUND = frozenset({"compound_statement", "do_group", "subshell", "list", "negated_command", "pipeline",
                       "redirected_statement", "if_statement", "case_statement", "for_statement",
                       "c_style_for_statement", "while_statement"})


def _statement_lines(node: Any, src: bytes) -> tuple[str, Any]:
    """A statement's type, and the lines evaluating it runs (`Trace.executed`): all of them; a
    compound statement's first and last (its inner statements record their own); none of a
    program's. A function definition runs none: its (first, last) line is what it defines."""
    t = node.type
    if t == "function_definition":
        return t, node_lines(node)
    if t == "program":
        return t, ()
    return t, tuple(_end_lines(node, src) if t in _COMPOUND else _all_lines(node, src))


def _declaration_parts(node: Any, src: bytes) -> tuple[str, tuple[Any, ...]]:
    """A declaration's builtin (`declare`, `export`, `local`, ...) and its words."""
    kids = node.children
    return (kids[0].type if kids else "declare"), tuple(c for c in kids[1:] if c.is_named)


def _statements(node: Any, src: bytes) -> list[Any]:
    """The statements of a compound statement, the commands of a pipeline."""
    return [c for c in node.named_children if c.type not in _SKIP]


def _list_parts(node: Any, src: bytes) -> list[Any]:
    """A list's statements and the operators between them."""
    return [c for c in node.children if c.type not in _SKIP]


def _command_parts(node: Any, src: bytes) -> tuple[Any, list[tuple[Any, bool, Any, Any]], list[Any], list[list[Any]]]:
    """A command's parts: its name, its assignments in order ((node, False, None, None) for one
    that assigns, in a command without a name; (node, True, name, value) for an environment
    prefix), its redirects, and its argument nodes (the ones written side by side grouped)."""
    name_node = node.child_by_field_name("name")
    assignments: list[tuple[Any, bool, Any, Any]] = []
    redirects: list[Any] = []
    words: list[list[Any]] = []
    for child in node.named_children:
        t = child.type
        if t == "variable_assignment" and name_node is not None and child.start_byte < name_node.start_byte:
            assignments.append((child, True, child.child_by_field_name("name"), child.child_by_field_name("value")))
        elif t == "variable_assignment" and name_node is None:
            assignments.append((child, False, None, None))
        elif t.endswith("redirect"):
            redirects.append(child)
        elif t == "command_name":
            words.append([child.named_children[0] if child.named_children else child])
        elif t not in _SKIP:
            # The grammar can end a word early (`$A:$B` read as `$A:$` and `B`): parts with
            # nothing between them are one word.
            if words and words[-1][-1].end_byte == child.start_byte:
                words[-1].append(child)
            else:
                words.append([child])
    return name_node, assignments, redirects, words


def _plain_fields(node: Any, src: bytes) -> Optional[list[Word]]:
    """The fields of a word whose expansion reads nothing of the state (a brace expansion of
    plain text, a plain word: the most common argument), else None."""
    t = node.type
    text = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
    if t == "brace_expression" or ("{" in text and (".." in text or "," in text)):
        braced = _brace_expand(text)
        if braced is not None and len(braced) > 1 and "$" not in text and "`" not in text:
            if len(braced) > MAX_FIELDS:
                return [Unknown(f"a brace expansion of over {MAX_FIELDS:,} words")]
            return [_unescape_word(b) for b in braced]
    if t == "word":  # its text, one field unless it is empty
        word = _unescape_word(text)
        return [_join_unknown([word])] if word else []
    return None


def _word_texts(node: Any, src: bytes) -> tuple[str, str]:
    """A word's text, and its text with escapes undone (unquoted)."""
    text = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
    return text, _unescape_word(text)


def _expanded_name(node: Any, src: bytes) -> str:
    """The name `$NAME` expands."""
    kids = node.named_children
    if kids:
        return src[kids[0].start_byte:kids[0].end_byte].decode("utf-8", "replace")
    return src[node.start_byte:node.end_byte].decode("utf-8", "replace")[1:]


def _expansion_parts(node: Any, src: bytes) -> list[Any]:
    """The parts of `${...}` inside its braces."""
    return [c for c in node.children if c.type not in ("${", "}")]


def _short_text(node: Any, src: bytes) -> str:
    """A node's text shortened to name it in a reason (`state._short`): a test that may or may not
    hold, before `&&` or `||`."""
    return _short(src[node.start_byte:node.end_byte].decode("utf-8", "replace"))


def _braced_name(node: Any, src: bytes) -> Optional[tuple[str, Any]]:
    """`${NAME}` with no operator: (the name, its node); None for any other `${...}`."""
    kids = _expansion_parts(node, src)
    if len(kids) == 1 and kids[0].type == "variable_name":
        return src[kids[0].start_byte:kids[0].end_byte].decode("utf-8", "replace"), kids[0]
    return None


def _string_parts(node: Any, src: bytes) -> list[Any]:
    """A double-quoted string's parts in order: its texts (escapes undone) and the nodes of its
    expansions."""
    parts: list[Any] = []
    pos = node.start_byte + (2 if node.type == "translated_string" else 1)
    end = node.end_byte - 1
    for child in node.named_children:
        if child.start_byte > pos:
            # Text no child covers (the grammar leaves newlines between its pieces out).
            gap = src[pos:child.start_byte].decode("utf-8", "replace")
            if gap.strip('"'):
                parts.append(_unescape_dq(gap))
        if child.type == "string_content":
            parts.append(_unescape_dq(src[child.start_byte:child.end_byte].decode("utf-8", "replace")))
        else:
            # The grammar can start an expansion's node (and its `$` token) at the blanks
            # before the `$` inside a string (`"$A $B"`): those blanks are text.
            text = src[child.start_byte:child.end_byte].decode("utf-8", "replace")
            lead = len(text) - len(text.lstrip(" \t\n"))
            if lead:
                parts.append(text[:lead])
            parts.append(child)
        pos = child.end_byte
    if end > pos:  # the text after the last part (or all of it): `" ${A[*]} "`'s last blank
        parts.append(_unescape_dq(src[pos:end].decode("utf-8", "replace")))
    return parts


def _concatenation_parts(node: Any, src: bytes) -> list[Any]:
    """A word's parts written side by side: the text of each token, the node of each part."""
    return [c if c.is_named else src[c.start_byte:c.end_byte].decode("utf-8", "replace")
            for c in node.children if c.type not in _SKIP]


def _if_clauses(node: Any, src: bytes) -> list[tuple]:
    """An `if` statement's clauses: (test nodes, body nodes) of the `if`, then (tests, body, the
    clause) of each `elif` and (None, body, the clause) of the `else`."""
    clauses: list[tuple] = []
    cond_nodes: list[Any] = []
    body: list[Any] = []
    current_cond: Any = None
    for child in node.children:
        if child.type == "if" or child.type == "then" or child.type == "fi" or not child.is_named:
            if child.type == "then":
                current_cond = cond_nodes
                cond_nodes = []
            continue
        if child.type in ("elif_clause", "else_clause"):
            continue
        if current_cond is None:
            cond_nodes.append(child)
        else:
            body.append(child)
    clauses.append((current_cond or [], body))
    for child in node.named_children:
        if child.type == "elif_clause":
            conds, bod, seen_then = [], [], False
            for c in child.children:
                if c.type == "then":
                    seen_then = True
                    continue
                if not c.is_named or c.type in _SKIP:
                    continue
                (bod if seen_then else conds).append(c)
            clauses.append((conds, bod, child))
        elif child.type == "else_clause":
            clauses.append((None, [c for c in child.named_children if c.type not in _SKIP], child))
    return clauses


def _assignment_parts(node: Any, src: bytes) -> Optional[tuple[str, Any, bool, bool, Any]]:
    """An assignment's name, value node, whether it appends (`+=`), whether it sets an element
    (`a[i]=...`) and that element's index node; None without a name."""
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return None
    value_node = node.child_by_field_name("value")
    append = any(not c.is_named and c.type == "+=" for c in node.children)
    idx = None
    subscript = name_node.type == "subscript"
    if subscript:
        base = name_node.child_by_field_name("name")
        idx = name_node.child_by_field_name("index")
        name_node = base if base is not None else name_node
    return src[name_node.start_byte:name_node.end_byte].decode("utf-8", "replace"), value_node, append, subscript, idx


def _unary_parts(node: Any, src: bytes) -> tuple[str, list[Any]]:
    """A unary test's operator and operand nodes."""
    op = node.child_by_field_name("operator")
    opt = src[op.start_byte:op.end_byte].decode("utf-8", "replace") if op is not None else (
        node.children[0].type if node.children else "")
    return opt, [c for c in node.named_children if c != op]


def _binary_parts(node: Any, src: bytes) -> tuple[Any, str, Any, list[Any]]:
    """A binary test's left node, operator, right node and right nodes (the grammar may split the
    right side into several `right` parts: `*" ${B} "*`)."""
    op = node.child_by_field_name("operator")
    opt = src[op.start_byte:op.end_byte].decode("utf-8", "replace") if op is not None else ""
    right = node.child_by_field_name("right")
    return node.child_by_field_name("left"), opt, right, node.children_by_field_name("right") or [right]


def _redirected_parts(node: Any, src: bytes) -> tuple[Any, list[Any], list[Any]]:
    """A redirected statement's body, its other parts, and the redirects among them."""
    body = node.child_by_field_name("body")
    others = [c for c in node.named_children if c != body]
    return body, others, [c for c in others if c.type.endswith("redirect")]
