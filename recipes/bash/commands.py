"""What one command means for the analysis, once the walker has expanded its words: setters
(`export`/`declare` assignments), `source`/`.` and `bash FILE` (helpers on the launch path),
`exec` and wrappers (`sudo`, `env`, `timeout`, ...: the wrapped command is judged),
`bash -c`/`eval`/`bash -s <<EOF` strings (analysed recursively), code the bot cannot read
(a download piped to a shell), then launch, pip and patch detection (recipes.bash.detect).
"""
from __future__ import annotations

import re

from .detect import Detectors
from .model import MSG_OPAQUE, MSG_OPAQUE_EVAL, MSG_OPAQUE_RUN, Bound, Finding, Located, ShellCommand, _Ctx, _short

SETTERS = {"export", "declare", "typeset", "local", "readonly"}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_NESTING = 3  # wrappers, `exec`, `eval` and `bash -c` strings followed inside each other (docs/bounds.md)
PARSE_BOUNDS = frozenset({"MAX_BRACKET_DEPTH", "MAX_LIST_OPERATORS", "MAX_SEPARATORS"})  # bounds of one text's parse
WRAPPERS = {
    "command": frozenset({"-p"}), "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "sudo": frozenset({"-u", "-g", "-U", "-C", "-h", "-p", "-r", "-t", "-D"}), "nohup": frozenset(),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "xargs": frozenset({"-I", "-i", "-n", "-P", "-d", "-L", "-E", "-s", "-a", "--arg-file", "--delimiter",
                        "--max-args", "--max-procs", "--replace"}),
    "nice": frozenset({"-n", "--adjustment"}), "stdbuf": frozenset({"-i", "-o", "-e"}), "time": frozenset(),
    "setsid": frozenset(), "ionice": frozenset({"-c", "-n", "-p"}), "chrt": frozenset(),
}
_DYNAMIC = re.compile(r"^\s*(?:\$\(|`|\$\{?[A-Za-z_@*])")


class Commands(Detectors):
    """Per-command semantics (mixed into the analyser, recipes.bash.walker)."""

    vars: dict[str, str]

    # ----- per-command analysis
    def handle(self, cmd: ShellCommand, ctx: _Ctx) -> None:
        self.out.commands.append(cmd)
        self._function = cmd.function
        argv = cmd.expanded or cmd.argv
        head = argv[0].rsplit("/", 1)[-1]
        cond = cmd.condition
        if head in SETTERS:
            # Literal words, so `export X=$Y` keeps `$Y` as the value and `resolved` expands it.
            lines = cmd.arg_lines if len(cmd.arg_lines) == len(cmd.argv) else [cmd.line] * len(cmd.argv)
            for arg, line in zip(cmd.argv[1:], lines[1:]):
                if arg.startswith("-"):
                    continue
                name, has_value, value = arg.partition("=")
                if not _ENV_NAME.match(name):
                    continue
                if has_value:
                    self.assign(name, value, line, cond, exported=head == "export",
                                raw=self._raw_for(cmd, name) or arg, function=cmd.function)
                elif head == "export" and name in self.out.exports:
                    self.out.assignments.append((name, self.out.exports[name], True))
            return
        if ctx.depth >= MAX_NESTING and (head in WRAPPERS or head in ("exec", "eval") or
                                         (head in ("bash", "sh") and len(argv) > 1)):
            # `eval "$e"` where e holds `eval "$e"`, `sudo sudo sudo sudo sed -i ...`: what runs
            # is past the depth the analysis follows, so it is not known.
            self.bound(Bound("MAX_NESTING", MAX_NESTING, f"the nesting of `{head}` in wrappers, `eval` and `bash -c`"))
            return
        if head in ("source", ".") and len(argv) > 1 and argv[1].startswith(("<(", "/dev/fd/", "/proc/self/fd/")):
            self.opaque(cmd.line, MSG_OPAQUE_RUN.format(text=_short(cmd.text)))
            return
        if head in ("source", ".") and len(argv) > 1:
            self.out.sources.append(Located(value=cmd.argv[1], line=cmd.line, conditional=bool(cond),
                                            condition=cond, resolved=argv[1], function=cmd.function))
            return
        if head == "exec" and len(argv) > 1 and len(cmd.argv) == len(argv) and ctx.depth < MAX_NESTING:
            # `exec CMD ...` replaces the shell with CMD: analyse CMD itself.
            inner = ShellCommand(argv=cmd.argv[1:], line=cmd.line, text=cmd.text, env=cmd.env,
                                 redirects=cmd.redirects, conditional=cmd.conditional, condition=cmd.condition,
                                 expanded=cmd.expanded[1:], arg_lines=cmd.arg_lines[1:],
                                 arg_conditions=cmd.arg_conditions[1:], function=cmd.function)
            self.handle(inner, _Ctx(ctx.conditions, ctx.depth + 1, ctx.function))
            return
        if head.endswith(".sh") and not argv[0].startswith("$"):
            # `./helper.sh` or `"$(dirname "$0")/helper.sh"`: a script the launcher runs.
            self.out.sources.append(Located(value=cmd.argv[0], line=cmd.line, conditional=bool(cond),
                                            condition=cond, resolved=argv[0], function=cmd.function))
        if head in ("cd", "pushd", "popd"):
            target = argv[1] if len(argv) > 1 else None
            previous = self.cwd
            if head == "popd" or target == "-":
                self.cwd = self._prev_cwd
            elif target is None:
                self.cwd = None
            else:
                self.cwd = target if target.startswith("/") or self.cwd is None else f"{self.cwd.rstrip('/')}/{target}"
            self._prev_cwd = previous
            return
        if head in WRAPPERS and ctx.depth < MAX_NESTING:
            inner_cmd = self.unwrap(cmd, head)
            if inner_cmd is not None:
                # `sudo -E git apply x`, `timeout 60 sed -i ...`: judge the wrapped command.
                self.handle(inner_cmd, _Ctx(ctx.conditions, ctx.depth + 1, ctx.function))
                return
        if head in ("bash", "sh", "eval") and ctx.depth < MAX_NESTING:
            inner = None
            if head == "eval":
                inner = " ".join(argv[1:])
                if _DYNAMIC.search(inner):
                    self.opaque(cmd.line, MSG_OPAQUE_EVAL.format(text=_short(cmd.text)))
                    return
            else:
                flag_c = next((k for k, a in enumerate(argv[1:-1], 1) if re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", a)), None)
                if flag_c is not None:
                    inner = argv[flag_c + 1]
            if inner:
                self.nested(inner, cmd.line, ctx)
                return
            script = next((a for a in argv[1:] if not a.startswith("-")), None)
            stdin = head != "eval" and ("-s" in argv[1:] or script is None)
            if stdin and self._stdin_heredoc is not None:
                # `bash -s <<'EOF'`: the heredoc body is the script.
                h = self._stdin_heredoc
                self.nested(h.body, h.body_line, ctx)
                return
            if script is not None and script.startswith(("<(", "/dev/fd/", "/proc/self/fd/")):
                self.opaque(cmd.line, MSG_OPAQUE_RUN.format(text=_short(cmd.text)))
                return
            if head != "eval" and script:
                # `bash helper.sh` runs a referenced script: report it with the sourced helpers.
                self.out.sources.append(Located(value=cmd.argv[argv.index(script)] if len(cmd.argv) == len(argv) else script,
                                                line=cmd.line, conditional=bool(cond), condition=cond, resolved=script,
                                                function=cmd.function))
        self.detect_launch(cmd, argv)
        self.detect_pip(cmd, argv)
        self.detect_patches(cmd, cmd.argv, cmd.argv[0].rsplit("/", 1)[-1])

    def opaque(self, line: int, message: str, text: str | None = None) -> None:
        """Something on the path runs code the bot cannot read: a "could not verify" finding."""
        self.out.partial = True
        if text is not None:
            self.out.opaque_texts[line] = text
        self.out.findings.append(Finding(path=self.path, line=line, code="shell-opaque", severity="warning",
                                         message=MSG_OPAQUE.format(line=line, path=self.path, what=message)))

    def unwrap(self, cmd: ShellCommand, head: str) -> ShellCommand | None:
        """The command a wrapper (`env`, `sudo`, `nohup`, `timeout`, `xargs`, ...) runs, or None."""
        words = cmd.expanded or cmd.argv
        k = 1
        value_opts = WRAPPERS[head]
        while k < len(words):
            w = words[k]
            if head == "command" and w in ("-v", "-V"):
                return None  # `command -v x` only asks where x is
            if w == "--":
                k += 1
                break
            if w.startswith("-") and len(w) > 1:
                k += 2 if w in value_opts else 1
                continue
            if head == "env" and "=" in w and _ENV_NAME.match(w.split("=", 1)[0]):
                k += 1
                continue
            if head == "timeout" and re.fullmatch(r"[\d.]+[smhd]?", w):
                k += 1
                break
            break
        if head == "timeout" and k < len(words) and re.fullmatch(r"[\d.]+[smhd]?", words[k]):
            k += 1
        if k >= len(words):
            return None
        same = len(cmd.argv) == len(words)
        argv = cmd.argv[k:] if same else words[k:]
        return ShellCommand(argv=argv, line=cmd.line, text=cmd.text, env=cmd.env, redirects=cmd.redirects,
                            conditional=cmd.conditional, condition=cmd.condition, expanded=words[k:],
                            arg_lines=cmd.arg_lines[k:], arg_conditions=cmd.arg_conditions[k:], function=cmd.function)

    def _raw_for(self, cmd: ShellCommand, name: str) -> str | None:
        m = re.search(rf"\b{re.escape(name)}=(\$\(.*)", cmd.text, re.S)
        return m.group(0) if m else None

    def nested(self, inner: str, line: int, ctx: _Ctx) -> None:
        from .parse import parse_bash
        from .walker import _Analyzer  # the walker is built on this mixin

        sub = _Analyzer(inner, self.path, line - 1)
        sub.budget = self.budget  # one budget for the script and every string it runs
        sub.vars = dict(self.vars)
        sub.tainted = set(self.tainted)
        sub.out.arrays = dict(self.out.arrays)
        sub.out.exports = dict(self.out.exports)
        sub.cwd = self.cwd
        sub.out.functions = self.out.functions
        try:
            tree, sub.src = parse_bash(sub.src)
            sub.walk(tree.root_node, _Ctx(ctx.conditions, ctx.depth + 1, ctx.function))
        except Bound as b:
            b.line = None  # reported at the line running the string
            if b.stop and b.name not in PARSE_BOUNDS:
                raise  # the shared budget is spent: the rest of the outer script is not read either
            b.stop = False  # only the string is unreadable
            self.bound(b)
            return
        except (RecursionError, ValueError, TypeError, IndexError, KeyError, AttributeError):
            return  # a string that is not shell: nothing runtime to report
        for f in sub.out.findings:
            if f.code == "shell-cap":  # a bound reached inside the string holds for its line here
                self.out.findings.append(f)
                self.out.partial = True
        for c in sub.out.commands:
            c.conditional = c.conditional or bool(ctx.conditions)
            c.condition = c.condition or ctx.joined
        self.out.commands.extend(sub.out.commands)
        self.out.patches.extend(sub.out.patches)
        self.out.pip_installs.extend(sub.out.pip_installs)
        self.out.server_launches.extend(sub.out.server_launches)
        self.out.sources.extend(sub.out.sources)
        for name, loc, exported in sub.out.assignments:
            self.out.assignments.append((name, loc, exported))
            self.out.exports[name] = loc
        self.vars.update(sub.vars)
        self.tainted |= sub.tainted
