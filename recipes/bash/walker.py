"""The bash walker: tree-sitter-bash reads the script (error tolerant; recipes.bash.parse), and the walk records what
runs, in order, with the if/case conditions around it: assignments and exports (the value the
benchmark run serves when a branch is eval-only: recipes.bash.model.eval_branch), arrays
(nested expansion included), commands with their words expanded, heredocs, functions, and the
conditions a word's value carries. What each command does is `Commands` (recipes.bash.commands).
"""
from __future__ import annotations

import re
import shlex
from dataclasses import replace
from typing import Any

from .commands import WRAPPERS, Commands
from ..launch.pycode import IMPORT_LOOKUP
from .model import (
    MAX_ARRAY_ITEMS, MAX_COMMANDS, MAX_CONDITION_CHARS, MAX_RESOLVED_CHARS, MAX_VALUE_CHARS, MSG_BOUND, MSG_BOUND_REST, MSG_OPAQUE_RUN, MSG_PARSE, MSG_UNCLOSED_HEREDOC, Bound, Budget,
    Finding, FunctionDef, Heredoc, Located, ScriptAnalysis, ShellCommand, _Ctx, _short, eval_branch, point_branch,
)
from .parse import parse_bash
from .values import _ARRAY_REF, _PARAM, _SIMPLE_REF, _TRIM, _literal_arithmetic, _literal_printf, trim_pattern

MAX_RESOLVED_HEREDOC = 100_000  # characters of an unquoted heredoc body expanded line by line
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")

_DQ_ESCAPE = re.compile(r'\\([\\"$`])|\\\n')
_WORD_ESCAPE = re.compile(r"\\(.)|\\\n", re.S)
_ANSI_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "e": "\x1b", "a": "\a"}
_QUOTED_DELIM = re.compile(r"""['"\\]""")
_REDIRECT_NODES = ("file_redirect", "heredoc_redirect", "herestring_redirect")
_STATEMENTS = frozenset({"command", "redirected_statement", "variable_assignment", "declaration_command"})
_STATEMENT_SKIP = ("comment", "heredoc_body", "heredoc_start", "heredoc_end", "regex")




class _Analyzer(Commands):
    def __init__(self, text: str, path: str, line_offset: int, env: dict[str, int] | None = None):
        self.text = text
        # A point's matrix values (CONC, DCP_SIZE, ...): set before line 1, and an if/elif/else
        # branch whose condition they decide to be false is not walked (recipes.bash.model.point_branch).
        self.point_env = dict(env) if env else None
        self.src = text.encode("utf-8", "surrogatepass")
        self.path = path
        self.offset = line_offset
        self.out = ScriptAnalysis(path=path)
        self.vars: dict[str, str] = {k: str(v) for k, v in (env or {}).items()}
        self.tainted: set[str] = set()
        self.cwd: str | None = None  # best effort: the directory relative targets resolve against
        self._prev_cwd: str | None = None
        self._heredoc_by_line: dict[int, list[Heredoc]] = {}
        self._lines: list[bytes] | None = None
        self._function: str | None = None  # of the command being handled
        self.budget = Budget()  # shared with the analyses of nested `bash -c`/`eval` strings
        self._at = 1 + line_offset  # the line being walked (where a bound is reported)
        self._bounds: set[tuple[str, int | None]] = set()
        self._stdin_heredoc: Heredoc | None = None  # a heredoc fed to the command being handled

    # ----- positions and text
    def line(self, node: Any) -> int:
        return node.start_point[0] + 1 + self.offset

    def raw(self, node: Any) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def physical_line(self, row: int) -> str:
        if self._lines is None:
            self._lines = self.src.split(b"\n")
        return self._lines[row].decode("utf-8", "replace") if row < len(self._lines) else ""

    def value(self, node: Any) -> str:
        """A word as the shell passes it after quote removal; expansions keep their spelling."""
        t = node.type
        if t == "word":
            raw = self.raw(node)
            return _WORD_ESCAPE.sub(lambda m: m.group(1) or "", raw) if "\\" in raw else raw
        if t == "raw_string":
            return self.raw(node)[1:-1]
        if t in ("string", "translated_string"):
            raw = self.raw(node)
            inner = raw[2:-1] if t == "translated_string" else raw[1:-1]
            return _DQ_ESCAPE.sub(lambda m: m.group(1) or "", inner) if "\\" in inner else inner
        if t == "ansi_c_string":
            return re.sub(r"\\(.)", lambda m: _ANSI_ESCAPES.get(m.group(1), m.group(1)), self.raw(node)[2:-1])
        if t == "concatenation":
            out: list[str] = []
            at = node.start_byte
            for c in node.children:
                if c.start_byte > at:
                    out.append(self.src[at:c.start_byte].decode("utf-8", "replace"))
                out.append(self.value(c))
                at = c.end_byte
            if node.end_byte > at:
                out.append(self.src[at:node.end_byte].decode("utf-8", "replace"))
            return "".join(out)
        return self.raw(node)

    # ----- entry
    def run(self) -> ScriptAnalysis:
        try:
            tree, self.src = parse_bash(self.src)
            root = tree.root_node
            if root.has_error:
                self.report_error(root)
            self.walk(root, _Ctx())
        except Bound as b:
            self.bound(b)
        self._heredoc_patches()
        if self.out.server_launches:
            self.out.server_launch = self.out.server_launches[0]
        return self.out

    def report_error(self, root: Any) -> None:
        """One finding naming the first line the grammar could not read; the rest still counts."""
        node = root
        while True:
            nxt = next((c for c in node.children if c.type == "ERROR" or c.is_missing or c.has_error), None)
            if nxt is None or node.type == "ERROR" or node.is_missing:
                break
            node = nxt
        if node.is_missing:
            what = f"missing `{node.type}`"
        else:
            snippet = self.raw(node).strip().split("\n", 1)[0][:40] or "end of file"
            what = f"unexpected `{snippet}`"
        line = self.line(node)
        self.out.partial = True
        self.out.findings.append(Finding(path=self.path, line=line, code="shell-parse", severity="warning",
                                         message=MSG_PARSE.format(line=line, path=self.path, what=what)))

    def bound(self, b: Bound) -> None:
        """A bound was reached: one "shell-cap" finding per bound and line (the checks read the
        script as unreadable there). A bound that stops the walk has no line: whatever follows
        is unread, so it holds wherever the script runs."""
        line = (b.line + self.offset if b.line is not None else self._at)
        key = (b.name, None if b.stop else line)
        if key in self._bounds:
            return
        self._bounds.add(key)
        self.out.partial = True
        message = MSG_BOUND.format(line=line, path=self.path, what=b.what, cap=b.cap, name=b.name,
                                   rest=MSG_BOUND_REST if b.stop else "")
        self.out.findings.append(Finding(path=self.path, line=None if b.stop else line, code="shell-cap",
                                         severity="warning", message=message))

    def inner(self, ctx: _Ctx, cond: str | None) -> _Ctx:
        """The context of a branch body: `ctx` with `cond` added (within MAX_CONDITION_CHARS)."""
        conditions = ctx.conditions + ((cond,) if cond else ())
        size = sum(len(c) + 4 for c in conditions)
        if size > MAX_CONDITION_CHARS:
            raise Bound("MAX_CONDITION_CHARS", MAX_CONDITION_CHARS, f"a {size:,}-character branch condition", stop=True)
        return _Ctx(conditions, ctx.depth, ctx.function)

    # ----- tree walk
    def walk(self, node: Any, ctx: _Ctx) -> None:
        t = node.type
        if t in _STATEMENTS:
            self._at = self.line(node)
            self.budget.statements += 1
            if self.budget.statements > MAX_COMMANDS:
                raise Bound("MAX_COMMANDS", MAX_COMMANDS, "the number of statements", stop=True)
        if t == "command":
            self.command(node, ctx, [], None)
        elif t == "redirected_statement":
            self.redirected(node, ctx)
        elif t == "variable_assignment":
            self.assignment(node, ctx, exported=False)
        elif t == "declaration_command":
            self.declaration(node, ctx)
        elif t == "if_statement":
            self.if_node(node, ctx)
        elif t == "case_statement":
            self.case_node(node, ctx)
        elif t == "function_definition":
            self.function_node(node, ctx)
        elif t == "pipeline":
            self.pipeline(node, ctx)
        elif t in _STATEMENT_SKIP:
            return
        else:
            for c in node.named_children:
                self.walk(c, ctx)

    def pipeline(self, node: Any, ctx: _Ctx) -> None:
        heads = []
        for c in node.named_children:
            cmd = c.child_by_field_name("body") if c.type == "redirected_statement" else c
            name = cmd.child_by_field_name("name") if cmd is not None and cmd.type == "command" else None
            args = [a for a in cmd.children_by_field_name("argument")] if name is not None else []
            heads.append((self.value(name).rsplit("/", 1)[-1] if name is not None else "",
                          [self.value(a) for a in args]))
        fetched = False
        for head, args in heads:
            while head in WRAPPERS and args:  # `| sudo sh`, `| env X=1 bash`
                rest = [a for a in args if not a.startswith("-") and "=" not in a]
                head, args = (rest[0].rsplit("/", 1)[-1], args[args.index(rest[0]) + 1:]) if rest else ("", [])
            if head in ("curl", "wget"):
                fetched = True
            elif fetched and (head in ("bash", "sh", "zsh", "source") or _PYTHON.match(head)) and \
                    not any(not a.startswith("-") for a in args if a not in ("-s", "-")):
                self.opaque(self.line(node), MSG_OPAQUE_RUN.format(text=_short(self.raw(node))), self.raw(node))
                break
        for c in node.named_children:
            self.walk(c, ctx)

    def substitutions(self, node: Any, ctx: _Ctx) -> None:
        """Commands inside `$(...)`, backticks and `<(...)` within a word run too."""
        text = self.src[node.start_byte:node.end_byte]
        if b"(" not in text and b"`" not in text:
            return  # every substitution's text holds `(` (`$(`, `<(`, `>(`) or a backtick
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type in ("command_substitution", "process_substitution"):
                for c in n.named_children:
                    self.walk(c, ctx)
                continue
            stack.extend(reversed(n.named_children))

    def redirected(self, node: Any, ctx: _Ctx) -> None:
        body = node.child_by_field_name("body")
        redirects = [c for c in node.named_children if c.type in _REDIRECT_NODES]
        if body is not None and body.type == "command":
            gap = b""
            if redirects and redirects[0].start_byte > body.end_byte:
                gap = self.src[body.end_byte:redirects[0].start_byte]
            self.command(body, ctx, redirects, gap.decode("utf-8", "replace"), stmt=node)
            return
        if body is not None:
            self.walk(body, ctx)
        sink: list[tuple[str, str]] = []
        extra: list[tuple[str, int, str]] = []
        for r in redirects:
            self.redirect(r, ctx, sink, extra, [], self.line(node))

    def redirect(self, node: Any, ctx: _Ctx, redirects: list[tuple[str, str]], words: list[tuple[str, int, str]],
                 heredocs: list[Heredoc], cmd_line: int, after: list[Any] | None = None) -> None:
        t = node.type
        if t == "file_redirect":
            op = next((c.type for c in node.children if not c.is_named), "")
            dests = node.children_by_field_name("destination")
            redirects.append((op, self.value(dests[0]) if dests else ""))
            for d in dests[1:]:  # the grammar reads words after a redirect as more targets
                words.append((self.value(d), self.line(d), self.raw(d)))
            for d in dests:
                self.substitutions(d, ctx)
        elif t == "heredoc_redirect":
            self.heredoc(node, ctx, redirects, words, heredocs, cmd_line, after)
        else:
            self.substitutions(node, ctx)

    def heredoc(self, node: Any, ctx: _Ctx, redirects: list[tuple[str, str]], words: list[tuple[str, int, str]],
                heredocs: list[Heredoc], cmd_line: int, after: list[Any] | None) -> None:
        start = body = end = None
        strip = False
        for c in node.children:
            if c.type == "<<-":
                strip = True
            elif c.type == "heredoc_start":
                start = c
            elif c.type == "heredoc_body":
                body = c
            elif c.type == "heredoc_end":
                end = c
            elif c.type in ("file_redirect", "herestring_redirect"):
                self.redirect(c, ctx, redirects, words, heredocs, cmd_line)
            elif c.is_named and c.type not in _STATEMENT_SKIP and after is not None:
                after.append(c)  # `<<EOF | tee log`: the pipeline continues after the operator
        if start is None:
            return
        spelled = self.raw(start)
        delim = _QUOTED_DELIM.sub("", spelled)
        text = self.raw(body) if body is not None else ""
        if strip:
            text = "\n".join(ln.lstrip("\t") for ln in text.split("\n"))
        line = self.line(node)
        if end is None or end.is_missing or self.raw(end).strip("\t ") != delim:
            self.out.findings.append(Finding(path=self.path, line=line, code="shell-parse", severity="warning",
                                             message=MSG_UNCLOSED_HEREDOC.format(delim=delim)))
            self.out.partial = True
        h = Heredoc(delimiter=delim, body=text, line=line,
                    body_line=self.line(body) if body is not None else line + 1,
                    quoted=bool(_QUOTED_DELIM.search(spelled)),
                    command=self.physical_line(node.start_point[0]).strip())
        if not h.quoted and "$" in text and len(text) <= MAX_RESOLVED_HEREDOC:
            h = replace(h, resolved="\n".join(self.resolve(ln) if "$" in ln else ln for ln in text.split("\n")))
        heredocs.append(h)
        self.out.heredocs.append(h)
        self._heredoc_by_line.setdefault(line, []).append(h)
        if cmd_line != line:
            self._heredoc_by_line.setdefault(cmd_line, []).append(h)

    def command(self, node: Any, ctx: _Ctx, outer_redirects: list[Any], gap: str | None, stmt: Any = None) -> None:
        words: list[tuple[str, int, str]] = []  # (value, line, raw source)
        prefix: list[Any] = []
        redirects: list[tuple[str, str]] = []
        heredocs: list[Heredoc] = []
        after: list[Any] = []
        named = False
        line = self.line(node)
        joined_end = -1  # end byte of the last argument, to join one that follows it unspaced
        joins: dict[int, tuple[list[str], list[str]]] = {}  # word index -> its parts (values, raws)
        self.budget.spend(node.named_child_count)
        for c in node.named_children:
            t = c.type
            if named and c.start_byte == joined_end and words and t not in _REDIRECT_NODES and t != "comment":
                # The grammar leaves `"a"\${B}"c"` as a string then a concatenation, side by
                # side; with no blank between them the shell passes them as one word (the
                # AMD job.slurm's srun script string around `\${RDMA_MOUNTS[@]+"..."}`). The
                # parts are joined once at the end (joining at each part is quadratic).
                at = len(words) - 1
                parts = joins.get(at)
                if parts is None:
                    parts = joins[at] = ([words[at][0]], [words[at][2]])
                parts[0].append(self.value(c))
                parts[1].append(self.raw(c))
                self.substitutions(c, ctx)
                joined_end = c.end_byte
                continue
            if t == "variable_assignment" and not named:
                prefix.append(c)
            elif t == "command_name":
                named = True
                inner = c.named_children[0] if c.named_children else c
                words.append((self.value(inner), self.line(c), self.raw(c)))
                self.substitutions(c, ctx)
                joined_end = c.end_byte
            elif t in _REDIRECT_NODES:
                self.redirect(c, ctx, redirects, words, heredocs, line, after)
            elif t == "comment":
                continue
            elif t == "word":  # most arguments: `value` and `substitutions` inlined on one decode
                raw = self.raw(c)
                words.append((_WORD_ESCAPE.sub(lambda m: m.group(1) or "", raw) if "\\" in raw else raw,
                              c.start_point[0] + 1 + self.offset, raw))
                if "(" in raw or "`" in raw:
                    self.substitutions(c, ctx)
                joined_end = c.end_byte
            else:
                words.append((self.value(c), self.line(c), self.raw(c)))
                self.substitutions(c, ctx)
                joined_end = c.end_byte
        for at, (values, raws) in joins.items():
            words[at] = ("".join(values), words[at][1], "".join(raws))
        if gap and gap.strip():  # words the grammar leaves between the command and a heredoc
            try:
                parts = shlex.split(gap, comments=True)
            except ValueError:
                parts = gap.split()
            words.extend((p, line, p) for p in parts)
        for r in outer_redirects:
            self.redirect(r, ctx, redirects, words, heredocs, line, after)
        if heredocs and stmt is not None:
            first_body = min((c.start_byte for r in outer_redirects for c in r.children if c.type == "heredoc_body"),
                             default=stmt.end_byte)
            text = self.src[stmt.start_byte:first_body].decode("utf-8", "replace").strip()
        else:
            text = self.raw(stmt if stmt is not None else node).strip()
        cond = ctx.joined
        argv = [w for w, _, _ in words]
        env: dict[str, Located] = {}
        for p in prefix:
            loc = self.assignment(p, ctx, exported=bool(argv))
            if argv and loc is not None:
                env[self.assign_name(p)] = loc
        self._stdin_heredoc = heredocs[0] if heredocs else None
        if argv:
            expanded, arg_lines, arg_conds = self.expand_words(words)
            last = (stmt if stmt is not None else node).end_point[0] + 1 + self.offset
            cmd = ShellCommand(argv=argv, line=line, text=text, env=env, redirects=redirects,
                               conditional=bool(cond), condition=cond, expanded=expanded, arg_lines=arg_lines,
                               arg_conditions=arg_conds, function=ctx.function, end_line=last)
            self.handle(cmd, ctx)
        for a in after:
            self.walk(a, ctx)

    # ----- assignments
    @staticmethod
    def assign_name(node: Any) -> str:
        name = node.child_by_field_name("name")
        return name.text.decode("utf-8", "replace") if name is not None and name.text else ""

    def assignment(self, node: Any, ctx: _Ctx, *, exported: bool) -> Located | None:
        name_node = node.child_by_field_name("name")
        if name_node is None or name_node.type != "variable_name":
            self.substitutions(node, ctx)
            return None  # `ARR[i]=x`: one element, not a variable
        name = self.raw(name_node)
        value_node = node.child_by_field_name("value")
        append = any(c.type == "+=" for c in node.children)
        cond = ctx.joined
        line = self.line(node)
        if value_node is not None:
            self.substitutions(value_node, ctx)
        if value_node is not None and value_node.type == "array":
            self.array_assign(name, append, value_node, cond)
            items = self.out.arrays.get(name, [])
            return Located(value=" ".join(e.value for e in items), line=line, conditional=bool(cond),
                           condition=cond, function=ctx.function)
        value = self.value(value_node) if value_node is not None else ""
        if append and name in self.vars:
            value = self.vars[name] + value
        return self.assign(name, value, line, cond, exported=exported, raw=self.raw(node), function=ctx.function)

    def declaration(self, node: Any, ctx: _Ctx) -> None:
        head = next((c.type for c in node.children if not c.is_named), "export")
        flags = "".join(self.raw(c) for c in node.named_children if c.type == "word" and self.raw(c).startswith("-"))
        exported = head == "export" or (head in ("declare", "typeset") and "x" in flags)
        argv = [head]
        line = self.line(node)
        for c in node.named_children:
            if c.type == "variable_assignment":
                self.assignment(c, ctx, exported=exported)
                argv.append(self.raw(c))
            elif c.type == "variable_name":
                name = self.raw(c)
                argv.append(name)
                if exported and name in self.out.exports:
                    self.out.assignments.append((name, self.out.exports[name], True))
            else:
                argv.append(self.value(c))
                self.substitutions(c, ctx)
        cond = ctx.joined
        self.out.commands.append(ShellCommand(argv=argv, line=line, text=self.raw(node).strip(),
                                              conditional=bool(cond), condition=cond, expanded=list(argv),
                                              arg_lines=[line] * len(argv), function=ctx.function))

    # ----- control flow
    def if_node(self, node: Any, ctx: _Ctx) -> None:
        previous: list[str] = []

        def clause(n: Any, cond_allowed: bool) -> None:
            in_cond = cond_allowed
            conds: list[Any] = []
            current = " && ".join(f"! ( {c} )" for c in previous) if not cond_allowed else None
            for c in n.children:
                if not c.is_named:
                    if c.type == "then":
                        in_cond = False
                        cond = "; ".join(self.raw(x).strip() for x in conds).strip().rstrip(";").strip()
                        current = " && ".join([f"! ( {p} )" for p in previous] + [cond])
                        if len(current) > MAX_CONDITION_CHARS:
                            raise Bound("MAX_CONDITION_CHARS", MAX_CONDITION_CHARS,
                                        f"the condition of an arm after {len(previous):,} arms", stop=True)
                        previous.append(cond)
                    continue
                if c.type in ("elif_clause", "else_clause"):
                    continue
                if in_cond:
                    conds.append(c)
                    self.walk(c, ctx)
                    continue
                if self.point_env is not None and point_branch(current, self._known_ints()) is False:
                    continue  # this point never takes the branch
                inner = self.inner(ctx, current)
                self.branch(c, inner)
                self.walk(c, inner)

        clause(node, True)
        for c in node.named_children:
            if c.type == "elif_clause":
                clause(c, True)
            elif c.type == "else_clause":
                clause(c, False)

    def branch(self, node: Any, ctx: _Ctx) -> None:
        """Record that the lines of a statement in a branch body run under the branch's condition."""
        if ctx.conditions and node.type != "comment":
            self.out.branches.append((self.line(node), node.end_point[0] + 1 + self.offset, ctx.joined))

    def _known_ints(self) -> dict[str, int]:
        """The integer values known here (assigned literals, then the point's matrix values)."""
        known = {k: int(v) for k, v in self.vars.items() if v.isdigit()}
        known.update(self.point_env or {})
        return known

    def case_node(self, node: Any, ctx: _Ctx) -> None:
        word = node.child_by_field_name("value")
        subject = self.raw(word) if word is not None else ""
        if word is not None:
            self.substitutions(word, ctx)
        for item in node.named_children:
            if item.type != "case_item":
                continue
            patterns = [self.raw(p) for p in item.children_by_field_name("value")]
            cond = f"{subject} matches {'|'.join(patterns)}"
            inner = self.inner(ctx, cond)
            values = {p.id for p in item.children_by_field_name("value")}
            for c in item.named_children:
                if c.id not in values:
                    self.branch(c, inner)
                    self.walk(c, inner)

    def function_node(self, node: Any, ctx: _Ctx) -> None:
        name_node = node.child_by_field_name("name")
        name = self.raw(name_node) if name_node is not None else ""
        if name:
            self.out.functions[name] = FunctionDef(name=name, line=self.line(node),
                                                   end_line=node.end_point[0] + 1 + self.offset)
        body = node.child_by_field_name("body")
        if body is not None:
            self.walk(body, _Ctx(ctx.conditions, ctx.depth, name or ctx.function))


    def resolve(self, value: str) -> str:
        """`value` with the variables known here expanded; as written when the expansion would be
        over MAX_VALUE_CHARS or past MAX_RESOLVED_CHARS in all, or a trim or printf is over its
        bound (each a "shell-cap" finding at the line being walked)."""
        if "$" not in value or self.budget.spent:
            return value  # every expansion below starts with `$`
        try:
            out = self._expand(value)
        except Bound as b:
            self.bound(b)
            return value
        self.budget.chars += len(out)
        if self.budget.chars > MAX_RESOLVED_CHARS:
            self.budget.spent = True
            self.bound(Bound("MAX_RESOLVED_CHARS", MAX_RESOLVED_CHARS, "the characters of the expanded values",
                             stop=True))
            return value
        return out

    def _expand(self, value: str) -> str:
        size = [len(value)]

        def sub(m: re.Match) -> str:
            name = m.group(1) or m.group(4)
            if name in self.vars:
                got = self.vars[name]
            elif m.group(2) and m.group(3) is not None:
                # The default is expanded like any word (`${A:-${ROOT}/x}`, `${A:-$ROOT/x}`).
                got = self._expand(m.group(3)) if "$" in m.group(3) else m.group(3)
            else:
                return m.group(0)
            size[0] += len(got)
            if size[0] > MAX_VALUE_CHARS:
                raise Bound("MAX_VALUE_CHARS", MAX_VALUE_CHARS, "the characters of an expanded value")
            return got
        out = _TRIM.sub(self._trim, value) if "${" in value else value
        out = _PARAM.sub(sub, out)
        if "$((" in out or "awk" in out:
            out = _literal_arithmetic(out, self.vars)
        if "printf" in out:
            out = _literal_printf(out)
        if len(out) > MAX_VALUE_CHARS:
            raise Bound("MAX_VALUE_CHARS", MAX_VALUE_CHARS, "the characters of an expanded value")
        return out

    def _trim(self, m: re.Match) -> str:
        """`${DRAFT_MODEL##*/}`, `${MODEL_PATH%/}`: a known value with a glob prefix/suffix removed."""
        name, op, pattern = m.group(1), m.group(2), m.group(3)
        if name not in self.vars or "$" in pattern:
            return m.group(0)
        return trim_pattern(self.vars[name], op, pattern)

    def assign(self, name: str, value: str, line: int, cond: str | None, *, exported: bool,
               raw: str = "", function: str | None = None) -> Located:
        resolved = self.resolve(value)
        loc = Located(value=value, line=line, conditional=bool(cond), condition=cond, resolved=resolved,
                      function=function)
        if "$(" in raw or "`" in raw:
            low = raw.lower()
            if ("python" in low and IMPORT_LOOKUP.search(raw)) or "pip show" in low:
                self.tainted.add(name)
        self.out.assignments.append((name, loc, exported))
        if eval_branch(cond) is True and name in self.vars:
            # `if [ "$EVAL_ONLY" = true ]; then X=eval-value; fi`: the benchmark run keeps the value
            # it had (or gets from the other branch); the eval-only one is recorded, not served.
            return loc
        self.vars[name] = resolved
        self.out.exports[name] = loc
        return loc

    def value_condition(self, raw: str) -> str | None:
        """The conditions of the assignments a word's variables were last given under: the
        value of `"$SPEC_CONFIG"` set in an `if`/`else` branch holds only in that branch."""
        if "$" not in raw:
            return None
        conds: list[str] = []
        for m in _PARAM.finditer(raw):
            src = self.out.exports.get(m.group(1) or m.group(4) or "")
            if src is not None and src.condition and src.condition not in conds:
                conds.append(src.condition)
        return " && ".join(conds) or None

    def array_assign(self, name: str, append: bool, node: Any, cond: str | None) -> None:
        items: list[Located] = self.out.arrays.get(name, [])[:] if append else []
        self.budget.spend(node.named_child_count)
        for el in node.named_children:
            if len(items) > MAX_ARRAY_ITEMS:
                self.bound(Bound("MAX_ARRAY_ITEMS", MAX_ARRAY_ITEMS, f"the elements of array {name}"))
                del items[MAX_ARRAY_ITEMS:]
                break
            if el.type == "comment":
                continue
            raw = self.raw(el)
            ref = _ARRAY_REF.match(raw.strip())
            if ref and ref.group(1) in self.out.arrays:
                # `"${SPEC_ARGS[@]}"` inside another array: its elements, with their own lines.
                self.budget.spend(len(self.out.arrays[ref.group(1)]))
                for item in self.out.arrays[ref.group(1)]:
                    where = " && ".join(c for c in (cond, item.condition) if c) or None
                    items.append(Located(value=item.value, line=item.line, conditional=bool(where), condition=where,
                                         resolved=item.resolved))
                continue
            value = self.value(el)
            simple = _SIMPLE_REF.match(raw.strip())
            if simple and el.type != "string" and simple.group(1) in self.vars and "$(" not in self.vars[simple.group(1)]:
                for part in self.vars[simple.group(1)].split():  # unquoted `$FLAGS` splits on whitespace
                    items.append(Located(value=part, line=self.line(el), conditional=bool(cond), condition=cond,
                                         resolved=part))
                continue
            where = " && ".join(c for c in (cond, self.value_condition(raw)) if c) or None
            items.append(Located(value=value, line=self.line(el), conditional=bool(where), condition=where,
                                 resolved=self.resolve(value)))
        if len(items) > MAX_ARRAY_ITEMS:
            self.bound(Bound("MAX_ARRAY_ITEMS", MAX_ARRAY_ITEMS, f"the elements of array {name}"))
            del items[MAX_ARRAY_ITEMS:]
        if append:
            self.out.arrays[name] = items
        elif eval_branch(cond) is not True or name not in self.out.arrays:
            self.out.arrays[name] = items  # an eval-only branch does not replace the served array

    def expand_words(self, words: list[tuple[str, int, str]]) -> tuple[list[str], list[int], list[str | None]]:
        out: list[str] = []
        lines: list[int] = []
        conds: list[str | None] = []  # condition under which an array element was added
        for word, line, raw in words:
            if len(out) > MAX_ARRAY_ITEMS:
                self.bound(Bound("MAX_ARRAY_ITEMS", MAX_ARRAY_ITEMS, "the words of an expanded command"))
                break
            if "$" not in raw:  # no reference to expand (both patterns below need `$`)
                out.append(self.resolve(word))
                lines.append(line)
                conds.append(None)
                continue
            m = _ARRAY_REF.match(raw.strip())
            if m and m.group(1) in self.out.arrays:
                self.budget.spend(len(self.out.arrays[m.group(1)]))
                for item in self.out.arrays[m.group(1)]:
                    out.append(item.resolved or item.value)
                    lines.append(item.line)
                    conds.append(item.condition)
                continue
            m = _SIMPLE_REF.match(raw.strip())
            if m and m.group(1) in self.vars and not raw.startswith('"'):
                # Unquoted expansion splits on whitespace only; quotes inside the value stay.
                src = self.out.exports.get(m.group(1))
                value = self.vars[m.group(1)]
                for part in ([value] if "$(" in value else value.split()):
                    out.append(part)
                    lines.append(src.line if src else line)
                    conds.append(src.condition if src else None)
                continue
            out.append(self.resolve(word))
            lines.append(line)
            conds.append(self.value_condition(raw))
        return out, lines, conds
