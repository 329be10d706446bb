"""Redirections, as bash applies them around a statement: standard input from a file, a
here-document or a here-string; standard output to a file (written, appended) or discarded.
A mixin of recipes.launch.shell.Interpreter."""
from __future__ import annotations

import re
from typing import Any, Optional

from .fs import Written
from .nodes import _redirected_parts
from .plans import plan
from .state import Ctx, Out, State, _child, _join_unknown
from .trace import READ, WRITE
from .words import Unknown, Word

# Files a redirect names that are no file the launch writes.
_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})

# How much of a written Python file is read for what it imports.
MAX_WRITTEN_SCAN = 100_000


class Redirects:
    def _redirected(self, node, state, ctx, stdin, out):
        body, others, redirects = plan("redirected", node, ctx.src, _redirected_parts)
        for c in others:
            self.ran(ctx, c)  # a redirect, a here-document's body
        sink = out
        new_stdin = stdin
        writes: list[tuple[Word, str, Any]] = []
        for r in redirects:
            got = self.redirect(r, state, ctx)
            if got is None:
                continue
            kind, value = got
            if kind == "stdin":
                new_stdin = value
            elif kind in ("write", "append"):
                writes.append((value, kind, r))
            elif kind == "devnull":
                sink = None
        if writes:
            sink = Out()
        status = None
        if body is None:
            return 0
        status = self.statement(body, state, ctx, stdin=new_stdin, out=sink) if body.is_named else 0
        for target, kind, r in writes:
            text = sink.value() if sink is not None else Unknown("output")
            self.write_file(target, text, "redirect" if kind == "write" else "append", state, ctx, r)
        return status

    def redirect(self, node: Any, state: State, ctx: Ctx) -> Optional[tuple[str, Word]]:
        t = node.type
        if t == "heredoc_redirect":
            start = node.child_by_field_name("heredoc_start") or _child(node, "heredoc_start")
            body = _child(node, "heredoc_body")
            quoted = start is not None and bool(re.search(r"['\"\\]", ctx.text(start)))
            text = self.heredoc_text(body, state, ctx, quoted) if body is not None else ""
            # A heredoc may carry its own redirect (`cat <<EOF > file`).
            for inner in node.named_children:
                if inner.type == "file_redirect":
                    got = self.redirect(inner, state, ctx)
                    if got and got[0] in ("write", "append"):
                        self.write_file(got[1], text, "heredoc", state, ctx, inner)
                        # the command's output went to the file; what it printed is the heredoc
                        # only for `cat`, which is the common case: written above.
            return ("stdin", text)
        if t == "herestring_redirect":
            arg = [c for c in node.named_children]
            value = self.word_text(arg[-1], state, ctx) if arg else ""
            return ("stdin", _join_unknown([value, "\n"]) if isinstance(value, str) else value)
        if t == "file_redirect":
            op = next((c.type for c in node.children if not c.is_named), ">")
            dest = node.child_by_field_name("destination")
            if dest is None:
                return None
            target = self.word_text(dest, state, ctx)
            fd_node = node.child_by_field_name("descriptor")
            fd = ctx.text(fd_node) if fd_node is not None else ""
            if op in ("<", "<&"):
                if op == "<&" or fd not in ("", "0"):
                    return None  # another descriptor than the standard input
                if target == "/dev/null":
                    return ("stdin", "")
                path = self.host_path(target, state)
                self.emit(READ, ctx, node, state, path=path)
                return ("stdin", self.read_text(path, state, ctx, node, quiet=True))
            if fd not in ("", "1") and op not in ("&>", "&>>"):
                # `2>/dev/null`, `2>&1`, `2> err.log`: the standard error (or another descriptor),
                # not the standard output, which stays where it was.
                if op in (">", ">>", ">|") and target not in _DEVICES:
                    self.write_file(target, Unknown(f"what a command printed on its descriptor {fd}"),
                                    "append" if op == ">>" else "redirect", state, ctx, node)
                return None
            if op in (">&", "&>&"):
                # `>&2`: the standard output goes to the standard error; `>&1` changes nothing.
                return None if target == "1" else ("devnull", "")
            if target in ("/dev/null", "/dev/stderr", "/dev/tty"):
                return ("devnull", "")
            if target == "/dev/stdout":
                return None
            if op in (">>", "&>>"):
                return ("append", target)
            return ("write", target)
        return None

    def write_file(self, target: Word, text: Word, how: str, state: State, ctx: Ctx, node: Any) -> None:
        path = self.host_path(target, state)
        detail = ""
        if isinstance(path, str) and path.endswith((".py", ".pth")) and isinstance(text, str):
            # What Python it writes imports (a start-up hook that patches the engine or the client).
            from .pycode import imported_modules

            mods = list(dict.fromkeys(imported_modules(text[:MAX_WRITTEN_SCAN])))
            detail = f"Python importing {', '.join(mods[:8])}" if mods else "Python"
        self.emit(WRITE, ctx, node, state, path=path, how=how, detail=detail)
        if isinstance(path, str):
            old = self.files.written(path)
            if how == "append" and old is not None:
                text = _join_unknown([old.text, text])
            if not self.files.write(path, Written(text, how, ctx.site(node))):
                self.unknown(ctx, node, state, "over the cap of files written by one launch")
