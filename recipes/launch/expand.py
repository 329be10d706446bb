"""Words as bash expands them: quoting, parameters and their operators, arrays, indirection,
command and arithmetic substitution, here-documents."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Optional

from .chars import HOLE_PREFIX, INTEGER
from .fs import WORKSPACE
from .outputs import _ENVIRONMENT_DEFAULTS
from .nodes import _braced_name, _concatenation_parts, _expanded_name, _expansion_parts, _plain_fields, _string_parts, _word_texts
from .plans import plan, table
from .state import (
    _NAME,
    _SKIP,
    MAX_DEPTH,
    MAX_VALUE_CHARS,
    Budget,
    Ctx,
    Out,
    State,
    _Exit,
    _intersperse,
    _join_unknown,
    _Loop,
    _Return,
    _scalar,
    _short,
    one_of_texts,
    symbolic,
)
from .text import (
    _ansi_c,
    _expansion_end,
    _fields,
    _replace,
    _segments_text,
    _trim,
    part_of,
    trim_unknown,
)
from .words import HOLE, MAX_ALTERNATIVES, Holed, OneOf, OneOfRest, OrEmpty, Rest, Unknown, Word, chars_of, or_empty, unclassed


# The plans the most frequent words look up first (`plans.table`): a word's fields when its
# expansion reads no state (None: it does), a word's texts, the name `$NAME` expands, a string's
# parts, the parts of `${...}`, the name of a `${NAME}` without operator (None: it has one).
_FIELDS = table("fields")
_WORD_TEXTS = table("word")
_NAMES = table("name")
_STRINGS = table("string")
_EXPANSIONS = table("expansion")
_BRACED = table("braced")
_UNREAD = object()

# What a here-document's text may escape or expand at (`Expansion.heredoc_text`).
_HEREDOC_SPECIAL = re.compile(r"[\\$`]")

# `$#`, `$?`, `$$`, `$!`, `$-`, `$_` (and the digits): no variable of the state.
_SPECIAL_PARAMETERS = frozenset("#?$!-_")


class Expansion:
    """Words as bash expands them: quoting, parameters and their operators, arrays, indirection,
command and arithmetic substitution, here-documents."""

    def word_text(self, node: Any, state: State, ctx: Ctx, *, quoted: bool = True) -> Word:
        """A word's text without splitting (an assignment's value, a redirect target)."""
        parts = self.segments(node, state, ctx, quoted=True)
        if len(parts) == 1:  # most often one text: what `_join_unknown` would return of it
            kind, value = parts[0]
            if kind != "fields" and value.__class__ is str and len(value) <= MAX_VALUE_CHARS:
                return value
        out: list[Word] = []
        for seg in parts:
            if seg[0] == "fields":
                out.append(" ".join(w for w in seg[1] if isinstance(w, str)) if all(isinstance(w, str) for w in seg[1])
                           else unclassed(next(w for w in seg[1] if isinstance(w, Unknown))))
            else:
                out.append(seg[1])
        return _join_unknown(out)

    def expand(self, node: Any, state: State, ctx: Ctx) -> list[Word]:
        """A word's fields after expansion and splitting (an argument)."""
        self.steps += 1  # one step per word, counted inline as in Interpreter.statement
        if self.steps > self.max_steps:
            raise Budget(f"over {self.max_steps:,} steps")
        if node.type in ("brace_expression", "word", "concatenation"):
            fields = _FIELDS.get(node, _UNREAD)
            if fields is _UNREAD:
                fields = plan("fields", node, ctx.src, _plain_fields)
            if fields is not None:
                return list(fields)
        segs = self.segments(node, state, ctx, quoted=False)
        return _fields(segs)

    def expand_joined(self, nodes: list[Any], state: State, ctx: Ctx) -> list[Word]:
        """One word the grammar returned as several adjacent nodes, expanded as one; a `$` it left
        at the end of one part names the variable the next part starts with."""
        segs: list[tuple[str, Any]] = []
        for n in nodes:
            segs += self.segments(n, state, ctx, quoted=False)
        out: list[tuple[str, Any]] = []
        for kind, value in segs:
            prev = out[-1] if out else None
            if prev is not None and prev[0] == "u_lit" and isinstance(prev[1], str) and prev[1].endswith("$") \
                    and kind == "u_lit" and isinstance(value, str):
                m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", value)
                if m:
                    out[-1] = ("u_lit", prev[1][:-1])
                    out += self.param(m.group(0), None, state, ctx, nodes[0], False)
                    out.append(("u_lit", value[m.end():]))
                    continue
            out.append((kind, value))
        return _fields(out)

    def expand_text(self, text: str, state: State, ctx: Ctx, node: Any) -> Word:
        """The value of a word given as text (an associative array element, an alias)."""
        words = self.expand_text_words(text, state, ctx, node)
        if any(isinstance(w, Unknown) for w in words):
            return unclassed(next(w for w in words if isinstance(w, Unknown)))
        return " ".join(words)  # type: ignore[arg-type]

    def expand_text_words(self, text: str, state: State, ctx: Ctx, node: Any) -> list[Word]:
        tree, src = self.parse(": " + text)
        cmd = tree.root_node.named_children[0] if tree.root_node.named_children else None
        inner = ctx.but(src=src)
        if cmd is None or cmd.type != "command":
            return [Unknown(f"`{_short(text)}` as words")]
        out: list[Word] = []
        for c in cmd.named_children[1:]:
            if c.type not in _SKIP:
                out += self.expand(c, state, inner)
        return out

    def pattern_text(self, node: Any, state: State, ctx: Ctx) -> Word:
        """A glob pattern as written, with its expansions' text (quoted parts escaped)."""
        if node.type in ("word", "extglob_pattern", "regex"):
            text = ctx.text(node)
            if "$" not in text and "`" not in text:
                return text
        segs = self.segments(node, state, ctx, quoted=False)
        out: list[Word] = []
        for kind, value in segs:
            if kind == "fields":
                value = " ".join(v for v in value if isinstance(v, str)) if all(isinstance(v, str) for v in value) \
                    else Unknown("a pattern")
            if isinstance(value, str) and kind == "q":
                value = re.sub(r"([*?\[\]\\])", r"\\\1", value)
            out.append(value)
        return _join_unknown(out)

    def segments(self, node: Any, state: State, ctx: Ctx, *, quoted: bool) -> list[tuple[str, Any]]:
        """The parts of a word: ("q", text) quoted, ("u", text) unquoted (split later) and
        ("fields", [words]) for `"$@"`/`"${a[@]}"`."""
        t = node.type
        if t in ("word", "number", "extglob_pattern", "variable_name"):
            # A name the grammar reads inside a word (`mia1` of `${X:-mia1-p01,mia1-p02}`) is text.
            text, unescaped = _WORD_TEXTS.get(node) or plan("word", node, ctx.src, _word_texts)
            return [("q", text)] if quoted else [("u_lit", unescaped)]
        if t == "simple_expansion":
            return self.param(_NAMES.get(node) or plan("name", node, ctx.src, _expanded_name), None, state, ctx, node, quoted)
        if t == "expansion":
            return self.expansion(node, state, ctx, quoted)
        if t == "raw_string":
            return [("q", ctx.text(node)[1:-1])]
        if t == "ansi_c_string":
            return [("q", _ansi_c(ctx.text(node)[2:-1]))]
        if t in ("string", "translated_string"):
            out: list[tuple[str, Any]] = []
            for part in _STRINGS.get(node) or plan("string", node, ctx.src, _string_parts):
                if part.__class__ is str:
                    out.append(("q", part))
                else:
                    out += self.segments(part, state, ctx, quoted=True)
            if not out:
                out.append(("q", ""))
            return out
        if t == "concatenation":
            out = []
            literal = "q" if quoted else "u_lit"
            for part in plan("concatenation", node, ctx.src, _concatenation_parts):
                if part.__class__ is str:
                    out.append((literal, part))
                else:
                    out += self.segments(part, state, ctx, quoted=quoted)
            return out
        if t == "command_substitution":
            text = ctx.text(node)
            if text.startswith("$((") and text.endswith("))"):
                # Inside `${X:-...}` the grammar reads `$(( a > b ))` as a command substitution
                # of a subshell; bash reads `$((` as arithmetic (a subshell needs `$( (`).
                value = self.arith(text[3:-2], state, ctx, node)
                return [("q" if quoted else "u", str(value) if value is not None else
                         Unknown(f"the arithmetic `{_short(text)}`", chars=INTEGER))]
            return [("q" if quoted else "u", self.substitute(node, state, ctx))]
        if t == "process_substitution":
            inner = state.copy()
            self._compound(node, inner, ctx, None, Out())
            return [("q", "/dev/fd/63")]
        if t == "arithmetic_expansion":
            inner = [c for c in node.named_children if c.type not in _SKIP]
            value = None
            for c in inner:
                value = self.arith(ctx.text(c), state, ctx, c)
            return [("q" if quoted else "u", str(value) if value is not None else
                     Unknown(f"the arithmetic `{_short(ctx.text(node))}`", chars=INTEGER))]
        if t == "brace_expression":
            return [("q" if quoted else "u_lit", ctx.text(node))]
        if t == "command_name":
            return self.segments(node.named_children[0], state, ctx, quoted=quoted) if node.named_children else []
        return [("q", Unknown(f"`{_short(ctx.text(node))}` ({t})"))]

    def param(self, name: str, index: Optional[str], state: State, ctx: Ctx, node: Any, quoted: bool):
        kind = "q" if quoted else "u"
        if name in ("@", "*"):
            words = list(state.positional)
            if quoted and name == "@":
                return [("fields", words)]
            return [(kind, _join_unknown(_intersperse(words, " ")))]
        rest = state.positional[-1] if state.positional and isinstance(state.positional[-1], Rest) else None
        if self.alternative_reads is not None and isinstance(rest, OneOfRest):
            self.alternative_reads.append("@")  # the arguments: `$#`, `$1` in a test
        if name in _SPECIAL_PARAMETERS or name.isdigit():
            if name == "#":
                if isinstance(rest, OneOfRest):
                    return [(kind, _length(state.positional))]
                return [(kind, str(len(state.positional)) if rest is None else Unknown(f"the number of arguments: {rest.why}"))]
            if name.isdigit():
                i = int(name)
                if i == 0:
                    return [(kind, state.argv0)]
                if rest is not None and i >= len(state.positional):
                    return [(kind, _element(state.positional, i - 1))]
                return [(kind, state.positional[i - 1] if i <= len(state.positional) else "")]
            if name == "?":
                return [(kind, str(state.status) if state.status is not None else Unknown("the last command's status"))]
            if name in ("$", "!"):
                # A process id: one fixed number, so `/tmp/x.$$` is one path in every trace.
                return [(kind, "4242" if name == "$" else "4243")]
            if name in ("-", "_"):
                return [(kind, Unknown(f"${name}"))]
        if name in self.inputs:  # self.note(name), inline: once per variable read
            self.read.add(name)
        var = state.lookup(name)
        value = None if var is None else var.value
        if self.alternative_reads is not None:
            self.read_alternatives(name, value)
        if value is None and name in ("BASH_SOURCE", "FUNCNAME", "LINENO"):
            value = self.special(name, ctx, node)
            if index is not None:
                return self.indexed(name, value, index, state, ctx, node, quoted)
        if value is None:
            special = _ENVIRONMENT_DEFAULTS.get(name)
            if special is not None:
                return [(kind, special(state))]
            if state.open_env and name.isupper() and not state.assigned(name):
                # A container whose environment the launch does not fully set (srt-slurm's setup
                # script): the image or the harness may set an environment variable.
                return [(kind, Unknown(f"${name} is not set by the launch (the container may set it)"))]
            return [(kind, Unknown(f"${name} is not set on this path"))]
        if index is not None:
            return self.indexed(name, value, index, state, ctx, node, quoted)
        return [(kind, value if value.__class__ is str else _scalar(value))]

    def read_alternatives(self, name: str, value: Any) -> None:
        """Note a variable read whose value has alternatives (a test over it is then tried with
        each value: `Interpreter._test`)."""
        if isinstance(value, OneOf) or (isinstance(value, list) and value and isinstance(value[-1], OneOfRest)):
            self.alternative_reads.append(name)

    def special(self, name: str, ctx: Ctx, node: Any) -> Any:
        """BASH_SOURCE (the file being run, as the host sees it), FUNCNAME, LINENO."""
        if name == "LINENO":
            return str(node.start_point[0] + 1) if node is not None else "0"
        if name == "FUNCNAME":
            return [ctx.function] if ctx.function else []
        if ctx.local:
            return [ctx.local]
        path = ctx.path
        if " (" in path or path.startswith("<"):
            return [Unknown(f"BASH_SOURCE of {path}")]
        return [path if path.startswith("/") else f"{WORKSPACE}/{path}"]

    def indexed(self, name: str, value: Any, index: str, state: State, ctx: Ctx, node: Any, quoted: bool):
        kind = "q" if quoted else "u"
        if index in ("@", "*"):
            words = list(value.values()) if isinstance(value, dict) else (
                list(value) if isinstance(value, list) else [value])
            if isinstance(value, Unknown):
                return [(kind, value)]
            if quoted and index == "@":
                return [("fields", words)]
            return [(kind, _join_unknown(_intersperse(words, " ")))]
        if isinstance(value, dict):
            key = self.expand_text(index, state, ctx, node) if "$" in index else index.strip("'\"")
            if isinstance(key, Unknown):
                return [(kind, key)]
            return [(kind, value.get(key, ""))]
        i = self.arith(index, state, ctx, node)
        if i is None:
            return [(kind, Unknown(f"{name}[{index}]"))]
        seq = value if isinstance(value, list) else [value]
        if seq and isinstance(seq[-1], Rest) and (i < 0 or i >= len(seq) - 1):
            return [(kind, _element(seq, i))]  # past the part the arms agree on
        if i < 0:
            i += len(seq)
        return [(kind, seq[i] if 0 <= i < len(seq) else "")]

    def expansion(self, node: Any, state: State, ctx: Ctx, quoted: bool):
        """`${...}`: read from its text with the grammar's parts."""
        kind = "q" if quoted else "u"
        braced = _BRACED.get(node, _UNREAD)
        if braced is _UNREAD:
            braced = plan("braced", node, ctx.src, _braced_name)
        if braced is not None:
            # `${NAME}`: what the general reading below gives it, without taking the node apart.
            name, target = braced
            value = self._named_value(name, state, ctx, target)
            return [(kind, value if value is not None else Unknown(f"${name} is not set on this path"))]
        kids = _EXPANSIONS.get(node) or plan("expansion", node, ctx.src, _expansion_parts)
        if not kids:
            return [(kind, "")]
        first = kids[0]
        # ${#x}, ${#a[@]}
        if not first.is_named and first.type == "#" and len(kids) == 2:
            target = kids[1]
            value = self._value_of(target, state, ctx)
            if isinstance(value, Unknown):
                return [(kind, unclassed(value))]
            if isinstance(value, tuple):
                seq, index = value[1], value[2]
                if isinstance(seq, Unknown):
                    return [(kind, seq)]
                if index in ("@", "*"):
                    if isinstance(seq, list) and seq and isinstance(seq[-1], OneOfRest):
                        return [(kind, _length(seq))]
                    if isinstance(seq, list) and seq and isinstance(seq[-1], Rest):
                        return [(kind, Unknown(f"the length of {value[0]}: {seq[-1].why}"))]
                    return [(kind, str(len(seq)) if isinstance(seq, (list, dict)) else "1")]
                got = self.indexed(value[0], seq, index, state, ctx, node, True)[0][1]
                return [(kind, str(len(got)) if isinstance(got, str) else got)]
            return [(kind, str(len(value)) if isinstance(value, str) else Unknown("a length", chars=INTEGER))]
        # ${!x}, ${!prefix*}, ${!a[@]}
        if not first.is_named and first.type == "!":
            target = kids[1] if len(kids) > 1 else None
            if target is None:
                return [(kind, Unknown("${!}"))]
            text = ctx.text(node)
            if text.endswith(("*}", "@}")) and target.type == "variable_name":
                prefix = ctx.text(target)
                names = sorted({k for f in state.frames for k in f if k.startswith(prefix) and not k.startswith(HOLE_PREFIX)})
                return [(kind, " ".join(names))]
            if target.type == "subscript":
                base = target.child_by_field_name("name")
                value = state.get(ctx.text(base)) if base is not None else None
                keys = list(value.keys()) if isinstance(value, dict) else [str(i) for i in range(len(value))] \
                    if isinstance(value, list) else (["0"] if value is not None else [])
                return [("fields", keys)] if quoted else [(kind, " ".join(keys))]
            ref = self._value_of(target, state, ctx)
            if isinstance(ref, Unknown) or isinstance(ref, tuple):
                return [(kind, Unknown(f"the variable {ctx.text(target)} names"))]
            if not _NAME.match(ref or ""):
                m = re.fullmatch(r"([A-Za-z_]\w*)\[([^\]]*)\]", ref or "")
                if m:
                    value = state.get(m.group(1))
                    if value is None:
                        return [(kind, Unknown(f"${{{ref}}} is not set"))]
                    return self.indexed(m.group(1), value, m.group(2), state, ctx, node, quoted)
                return [(kind, Unknown(f"${{!{ctx.text(target)}}} names `{ref}`"))]
            rest = kids[2:]
            if not rest:
                return self.param(ref, None, state, ctx, node, quoted)
            # `${!x:-default}`, `${!x#pat}`: the operator applies to the variable x names.
            name, value = ref, self._named_value(ref, state, ctx, target)
        else:
            target = first
            value = self._value_of(target, state, ctx)
            name = ctx.text(target)
            rest = kids[1:]
        if not rest:
            if isinstance(value, tuple):
                return self.indexed(value[0], value[1], value[2], state, ctx, node, quoted)
            return [(kind, value if value is not None else Unknown(f"${name} is not set on this path"))]
        op_node = rest[0]
        op = op_node.type if not op_node.is_named else ctx.text(op_node)
        operands = rest[1:]
        if isinstance(value, tuple):
            got = self.indexed(value[0], value[1], value[2], state, ctx, node, True)
            value = got[0][1] if got[0][0] != "fields" else _join_unknown(_intersperse(got[0][1], " "))
        if isinstance(value, OneOf) and all(isinstance(v, str) for v in value.values):
            return self._per_alternative(name, value, op_node, op, operands, state, ctx, node, quoted, kind)
        return self._operate(name, value, op_node, op, operands, state, ctx, node, quoted, kind)

    def _per_alternative(self, name: str, value: OneOf, op_node: Any, op: str, operands: list, state: State,
                         ctx: Ctx, node: Any, quoted: bool, kind: str) -> list:
        """An operator over a value with alternatives, applied to each (`${SEL:-default}` where SEL
        is empty or one of two folders gives the default or that folder): one of the results when
        each is one text, else unknown."""
        results = [self._operate(name, v, op_node, op, operands, state, ctx, node, quoted, kind) for v in value.values]
        texts = [r[0][1] for r in results if len(r) == 1 and r[0][0] == kind and isinstance(r[0][1], str)]
        if len(texts) < len(results):
            got: Word = Unknown(value.why)
        else:
            distinct = list(dict.fromkeys(texts))
            got = distinct[0] if len(distinct) == 1 else one_of_texts(distinct, value.why, value.label) \
                if len(distinct) <= MAX_ALTERNATIVES else Unknown(value.why)
        if op in (":=", "="):
            state.set(name, got)
        return [(kind, got)]

    def _operate(self, name: str, value: Any, op_node: Any, op: str, operands: list, state: State, ctx: Ctx,
                 node: Any, quoted: bool, kind: str) -> list:
        """`${name OP operands}` over `value` (a Word; None when unset)."""
        is_set = value is not None and not (isinstance(value, Unknown) and value.why.endswith("is not set on this path"))
        if op in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
            empty = (not is_set) or (op.startswith(":") and value == "")
            if isinstance(value, OrEmpty) and op in (":-", ":="):
                # Empty (the default) or set: what the default and the set values agree on.
                default = _segments_text(self._operand(operands, state, ctx, quoted))
                got: Word = value
                if isinstance(default, Unknown):
                    got = Unknown(value.why)
                elif default:
                    ends = or_empty([value, default], value.why)
                    got = Unknown(value.why, ends.set_prefix, ends.set_suffix)
                if op == ":=":
                    state.set(name, got)
                return [(kind, got)]
            if isinstance(value, Unknown) and is_set:
                if op in (":-", ":="):
                    # The value, or the default where it is empty: what both can hold.
                    got = value if value.chars is None or _never_empty(value) else \
                        _or_default(value, _segments_text(self._operand(operands, state, ctx, quoted)))
                    if op == ":=" and got is not value:
                        state.set(name, got)
                    return [(kind, got)]
                if op in ("-", "="):
                    return [(kind, value)]
                if op in (":+", "+"):
                    return [(kind, Unknown(f"whether {name} is set ({value.why})"))]
            operand = self._operand(operands, state, ctx, quoted)
            if op in (":-", "-"):
                return operand if empty else [(kind, value)]
            if op in (":=", "="):
                if empty:
                    state.set(name, _segments_text(operand))
                    return operand
                return [(kind, value)]
            if op in (":+", "+"):
                return [(kind, "")] if empty else operand
            if empty:
                return [(kind, Unknown(f"${{{name}{op}...}} fails: {name} is not set"))]
            return [(kind, value)]
        if not is_set:
            value = ""
        if isinstance(value, Unknown):
            # A trim or a substring keeps some of the characters (not the text a template
            # shows); any other operator may make others.
            if op in ("#", "##", "%", "%%"):
                return [(kind, trim_unknown(value, op, self._pattern_operand(operands, state, ctx)))]
            return [(kind, part_of(value) if op == ":" else unclassed(value))]
        if op in ("#", "##", "%", "%%"):
            pattern = self._pattern_operand(operands, state, ctx)
            return [(kind, _trim(value, op, pattern))]
        if op in ("/", "//", "/#", "/%"):
            pats = [o for o in operands if o.is_named]
            pattern = self.pattern_text(pats[0], state, ctx) if pats else ""
            slashes = [o for o in operands if not o.is_named and o.type == "/"]
            repl: Word = ""
            if len(pats) > 1:
                repl = self.word_text(pats[1], state, ctx)
            elif slashes and len(pats) == 1 and pats[0].start_byte < slashes[0].start_byte:
                repl = ""
            anchor = ctx.text(op_node) if op_node.is_named else op
            return [(kind, _replace(value, anchor, pattern, repl))]
        if symbolic(value):
            return [(kind, Unknown(f"`{_short(ctx.text(node))}` of a value each point has its own of"))]
        if op in ("^", "^^", ",", ",,"):
            return [(kind, value.upper() if op == "^^" else value.lower() if op == ",," else
                     (value[:1].upper() + value[1:]) if op == "^" else (value[:1].lower() + value[1:]))]
        if op == ":":
            nums = [ctx.text(o) for o in operands if o.is_named]
            try:
                off = self.arith(nums[0], state, ctx, node) if nums else 0
                length = self.arith(nums[1], state, ctx, node) if len(nums) > 1 else None
            except IndexError:
                off, length = None, None
            if off is None:
                return [(kind, Unknown(f"`{_short(ctx.text(node))}`"))]
            s = value[off:] if off >= 0 else value[len(value) + off:]
            if length is not None:
                s = s[:length] if length >= 0 else s[:len(s) + length]
            return [(kind, s)]
        if op == "@":
            return [(kind, Unknown(f"`{_short(ctx.text(node))}`"))]
        return [(kind, Unknown(f"`{_short(ctx.text(node))}`"))]

    def _value_of(self, target: Any, state: State, ctx: Ctx) -> Any:
        """A `${}` target's value: Word, None when unset, or (name, value, index) for a subscript."""
        if target.type == "subscript":
            base = target.child_by_field_name("name")
            idx = target.child_by_field_name("index")
            name = ctx.text(base) if base is not None else ""
            self.note(name)
            value = state.get(name)
            if self.alternative_reads is not None:
                self.read_alternatives(name, value)
            if value is None and name in ("BASH_SOURCE", "FUNCNAME"):
                value = self.special(name, ctx, target)
            if value is None:
                return None
            index = ctx.text(idx) if idx is not None else "0"
            if idx is not None and idx.type not in ("word", "number") and index not in ("@", "*"):
                iv = self.word_text(idx, state, ctx)
                if isinstance(iv, Unknown):
                    return iv
                index = iv
            return (name, value, index)
        return self._named_value(ctx.text(target), state, ctx, target)

    def _named_value(self, name: str, state: State, ctx: Ctx, node: Any) -> Any:
        """A plain variable's value: Word, or None when it is unset."""
        got = self.param(name, None, state, ctx, node, True)
        if not got:
            return ""
        k, v = got[0]
        if k == "fields":
            return _join_unknown(_intersperse(v, " "))
        if isinstance(v, Unknown) and v.why.endswith("is not set on this path"):
            return None
        return v

    def _operand(self, operands: list[Any], state: State, ctx: Ctx, quoted: bool):
        named = [o for o in operands if o.is_named]
        if not named:
            return [("q" if quoted else "u", "")]
        out = []
        for o in named:
            out += self.segments(o, state, ctx, quoted=quoted)
        return out

    def _pattern_operand(self, operands: list[Any], state: State, ctx: Ctx) -> Word:
        named = [o for o in operands if o.is_named]
        return _join_unknown([self.pattern_text(o, state, ctx) for o in named]) if named else ""

    def substitute(self, node: Any, state: State, ctx: Ctx) -> Word:
        """`$(...)`/backticks: the statements run in a subshell; their output as far as known."""
        inner = state.copy()
        out = Out()
        with self.new_process():
            try:
                self.depth_guard(ctx)
                for child in node.named_children:
                    if child.type not in _SKIP:
                        self.statement(child, inner, ctx.but(depth=ctx.depth + 1), out=out)
            except (_Exit, _Return, _Loop):
                pass
        value = out.value()
        if isinstance(value, str):
            value = value.rstrip("\n")
        elif isinstance(value, OneOf) and all(isinstance(v, str) for v in value.values):
            texts = list(dict.fromkeys(v.rstrip("\n") for v in value.values))
            value = texts[0] if len(texts) == 1 else one_of_texts(texts, value.why, value.label)
        elif isinstance(value, Holed) and value.holes and value.template.endswith("\n"):
            value = _strip_newlines(value)
        state.status = inner.status
        return value

    def depth_guard(self, ctx: Ctx) -> None:
        if ctx.depth + 1 > MAX_DEPTH:
            raise Budget(f"substitutions nested over {MAX_DEPTH} deep")

    def heredoc_text(self, body: Any, state: State, ctx: Ctx, quoted: bool) -> Word:
        """A here-document's text: as written when its delimiter is quoted, else with its
        expansions done. The grammar misses an expansion that starts a line after blanks, so the
        body is scanned here, not read off the grammar's children."""
        text = ctx.text(body)
        if quoted:
            return text
        parts: list[Word] = []
        i, n, plain = 0, len(text), []
        while i < n:
            special = _HEREDOC_SPECIAL.search(text, i)
            j = special.start() if special is not None else n
            if j > i:  # the text before the next backslash, `$` or backquote is plain: taken whole
                plain.append(text[i:j])
                i = j
                continue
            c = text[i]
            if c == "\\" and i + 1 < n and text[i + 1] in "$`\\\n":
                if text[i + 1] != "\n":
                    plain.append(text[i + 1])
                i += 2
                continue
            end = _expansion_end(text, i) if c in "$`" else None
            if end is None:
                plain.append(c)
                i += 1
                continue
            parts.append("".join(plain))
            plain = []
            snippet = text[i:end]
            words = self.expand_text_words('"' + snippet.replace('"', '\\"') + '"' if snippet[0] == "$" and
                                           not snippet.startswith(("$(", "${")) else '"' + snippet + '"',
                                           state, ctx, body)
            parts.append(words[0] if len(words) == 1 else _join_unknown(_intersperse(words, " ")))
            i = end
        parts.append("".join(plain))
        out = _join_unknown(parts)
        if isinstance(out, Unknown) and not isinstance(out, Holed):
            # The known parts stay readable beside the holes (a config file's other keys).
            template = "".join(p if isinstance(p, str) else HOLE for p in parts)
            if len(template) <= MAX_HOLED_CHARS:
                return Holed(out.why, out.prefix, out.suffix, template=template)
        return out


def _strip_newlines(value: Holed) -> Word:
    """A command substitution's text with holes, less the newlines it ends with (`awk` printing
    one field and a newline: the field)."""
    template = value.template.rstrip("\n")
    if template == HOLE:
        return value.holes[0]
    return replace(value, template=template, suffix=value.suffix.rstrip("\n"))


def _never_empty(value: Unknown) -> bool:
    """Whether a text with holes holds known text besides them (so `${X:-d}` is X)."""
    return isinstance(value, Holed) and bool(value.holes) and bool(value.template.replace(HOLE, ""))


def _or_default(value: Unknown, default: Word) -> Unknown:
    """`${X:-default}` of an unknown X whose characters are bounded: X, or the default when X is
    empty; the characters of both (None when the default's are not bounded). Holes that may all
    be empty are not the text then: it is one unknown of those characters."""
    more = chars_of(default)
    chars = None if more is None else value.chars | more
    if isinstance(value, Holed) and value.holes:
        return Unknown(value.why, value.prefix, value.suffix, chars=chars)
    return replace(value, chars=chars)


# The longest here-document kept with its holes (past it, only unknown).
MAX_HOLED_CHARS = 200_000


def _runs(seq: list[Word]) -> Optional[list[list[Word]]]:
    """The arrays an array ending in alternatives (`OneOfRest`) may be, else None."""
    rest = seq[-1] if seq else None
    if not isinstance(rest, OneOfRest):
        return None
    return [seq[:-1] + list(t) for t in rest.values]


def _element(seq: list[Word], i: int) -> Word:
    """Element i of an array whose end an undecided branch left unknown (`Rest`): the element
    every arm agrees on, one of the arms' elements, or unknown."""
    rest = seq[-1]
    runs = _runs(seq)
    if runs is None:
        return rest
    got = list(dict.fromkeys((r[i] if -len(r) <= i < len(r) else "") for r in runs))
    if len(got) == 1:
        return got[0]
    if all(isinstance(g, str) for g in got) and len(got) <= MAX_ALTERNATIVES:
        return one_of_texts(got, rest.why, rest.label)
    return Unknown(rest.why)


def _length(seq: list[Word]) -> Word:
    """The number of elements of an array ending in alternatives: known when the arms agree."""
    runs = _runs(seq) or []
    got = list(dict.fromkeys(str(len(r)) for r in runs))
    return got[0] if len(got) == 1 else one_of_texts(got, seq[-1].why, seq[-1].label)
