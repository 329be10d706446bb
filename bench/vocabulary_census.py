"""Census: every command name the real history's shell scripts run (the launch vocabulary's input).

Walks every shell blob reachable in a history's git directory (`git rev-list --all --objects`:
every blob of every commit once, deduplicated by id; a blob is shell when its name ends in
.sh/.bash/.slurm or its first line is a shebang naming bash/sh/zsh/dash), parses each with
tree-sitter-bash (`recipes.bash.walker.parse_bash`) and collects every literal command name: a
`command_name` that is a plain word (or a quoted literal), and the command a known wrapper or
shell runs, as the vocabulary itself reads it (`env A=1 X`, `timeout 5 X`, `sudo X`, `srun ... X`,
`docker run IMG X`, `bash -c 'X ...'`, `bash -s <<EOF`). Function names defined anywhere in the
walked history are script functions, not commands, and are left out, as are names that cannot be
a command's literal name (a `$`, a glob, an assignment: `NAME_RE`).

    python bench/vocabulary_census.py --repo IX --repo SRT \
        --write tests/fixtures/history_commands.txt

(IX a clone of the InferenceX history, SRT one of NVIDIA/srt-slurm: DEVELOPERS.md says how to get
them.)

prints the counts (blobs, distinct names, names per vocabulary class) and, with `--write`, the
sorted names, one a line, after a header naming this command.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from recipes.bash.walker import parse_bash  # noqa: E402
from recipes.launch.vocabulary import effects, name_class  # noqa: E402
from recipes.launch.words import Unknown, Word  # noqa: E402

SHELL_SUFFIXES = (".sh", ".bash", ".slurm")
SHEBANG = re.compile(rb"^#!\s*\S*?(?:/|env\s+)(?:bash|sh|zsh|dash)\b")
# A literal command name: no expansion, glob, quote, brace or assignment left in it, not an option,
# not an all-capitals word (a variable's name where the grammar took an argument for a command).
NAME_RE = re.compile(r"^(?!-)[A-Za-z0-9_.+:@%/,~-]+$")
VARIABLE_LIKE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
DIGITS = re.compile(r"^[0-9]+$")  # the grammar reads `$(( 8888 + X ))` as a command named 8888
# A name ending in `:` is a YAML key or a Python line (`else:`) in a script the grammar misread.
# Reserved words are never command names: where the grammar gives one as a name, it lost the
# statement (a comment after a line continuation, a stray `fi`), and so did the names around it.
RESERVED = frozenset("if then elif else fi case esac for while until do done in function select time "
                     "coproc { } ! [[ ]]".split())
MAX_BLOB_BYTES = 1_000_000
MAX_DEPTH = 4  # shell text inside shell text (`docker run ... bash -c '...'`)
WORD_ESCAPE = re.compile(r"\\(.)|\\\n", re.S)  # `\;` is `;`, a backslash-newline is nothing


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, check=True).stdout


def shell_blobs(repo: Path, *, max_commits: int | None, max_blobs: int | None) -> Iterator[tuple[str, str, bytes]]:
    """(blob id, the first path it was seen at, its bytes) for every shell blob of the history."""
    limit = [f"--max-count={max_commits}"] if max_commits else []
    listing = _git(repo, "rev-list", "--all", "--objects", "--missing=allow-any", *limit)
    paths: dict[str, str] = {}
    for line in listing.decode("utf-8", "replace").splitlines():
        oid, _, path = line.partition(" ")
        if not path or oid in paths:
            continue
        base = path.rsplit("/", 1)[-1]
        if base.endswith(SHELL_SUFFIXES) or "." not in base:
            paths[oid] = path  # extensionless: a shell script when its shebang says so (below)
    batch = subprocess.Popen(["git", "-C", str(repo), "cat-file", "--batch"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    assert batch.stdin is not None and batch.stdout is not None
    out = batch.stdout
    yielded = 0
    try:
        for oid, path in paths.items():
            batch.stdin.write(oid.encode() + b"\n")
            batch.stdin.flush()
            header = out.readline().split()
            if len(header) < 3:  # `<oid> missing`: a blob the partial mirror does not hold
                continue
            size = int(header[2])
            data = out.read(size)
            out.read(1)
            if header[1] != b"blob" or size > MAX_BLOB_BYTES:
                continue
            if not path.endswith(SHELL_SUFFIXES) and not SHEBANG.match(data):
                continue
            yield oid, path, data
            yielded += 1
            if max_blobs and yielded >= max_blobs:
                return
    finally:
        batch.stdin.close()
        batch.wait()


def _literal(node: Any, src: bytes) -> Word:
    """A word's text when it holds no expansion (the census reads names, not values)."""
    raw = src[node.start_byte:node.end_byte].decode("utf-8", "replace")
    if node.type in ("word", "number", "variable_name"):
        if "$" in raw or "`" in raw:
            return Unknown("expansion")
        return WORD_ESCAPE.sub(lambda m: m.group(1) or "", raw) if "\\" in raw else raw
    if node.type == "raw_string":
        return raw[1:-1]
    if node.type == "string" and all(c.type == "string_content" for c in node.named_children):
        return raw[1:-1]
    return Unknown("expansion")


class Census:
    """Names run and functions defined, over every blob walked."""

    def __init__(self) -> None:
        self.names: Counter[str] = Counter()
        self.clean_names: set[str] = set()  # seen in a blob the grammar read without an error
        self.functions: set[str] = set()
        self.blobs = 0
        self.unparsed = 0
        self.answers: Counter[str] = Counter()       # literal argvs asked, by name
        self.unknown: dict[str, Counter[str]] = {}   # name -> the vocabulary's unknown reasons
        self._clean = True

    def blob(self, data: bytes) -> None:
        self.blobs += 1
        self.text(data, 0)

    def commands(self) -> list[str]:
        """The command names: seen outside grammar errors, not script functions, not garbage."""
        return sorted(n for n in self.clean_names if n not in self.functions)

    def text(self, data: bytes, depth: int) -> None:
        try:
            tree, src = parse_bash(data)
        except (RecursionError, ValueError):
            self.unparsed += 1
            return
        clean, self._clean = self._clean, not tree.root_node.has_error if depth == 0 else self._clean
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "ERROR":
                continue  # what the grammar could not read holds no command it read
            if node.type == "function_definition":
                name = node.child_by_field_name("name")
                if name is not None:
                    self.functions.add(src[name.start_byte:name.end_byte].decode("utf-8", "replace"))
            elif node.type == "command":
                self.command(node, src, depth)
            elif node.type == "declaration_command":
                self.asked_functions(node, src)
            stack.extend(node.named_children)
        self._clean = clean if depth else True

    def command(self, node: Any, src: bytes, depth: int) -> None:
        name = node.child_by_field_name("name")
        if name is None or not name.named_children:
            return
        argv = [_literal(name.named_children[0], src)]
        argv += [_literal(a, src) for a in node.children_by_field_name("argument")]
        stdin_text = _heredoc_body(node, src)
        self.argv(argv, stdin_text, depth)

    def asked_functions(self, node: Any, src: bytes) -> None:
        """`declare -F NAME`: NAME is a function (a hook an outside file may define)."""
        words = [_literal(c, src) for c in node.named_children
                 if c.type in ("word", "raw_string", "string", "variable_name")]
        if words[:1] == ["-F"] or words[:1] == ["-f"]:
            self.functions.update(w for w in words[1:] if isinstance(w, str) and NAME_RE.match(w))

    def argv(self, argv: list[Word], stdin_text: bytes | None, depth: int) -> None:
        head = argv[0]
        if not isinstance(head, str) or not NAME_RE.match(head) or VARIABLE_LIKE.match(head) \
                or DIGITS.match(head) or head in RESERVED or head.endswith(":"):
            return
        self.names[head] += 1
        if self._clean:
            self.clean_names.add(head)
        if depth >= MAX_DEPTH:
            return
        if head in ("command", "exec", "builtin"):
            # builtins the interpreter unwraps itself: `exec python3 ...`, `command -p sed ...`
            rest = argv[1:]
            while rest and isinstance(rest[0], str) and rest[0].startswith("-"):
                if rest[0] in ("-v", "-V"):
                    return  # `command -v X` asks where X is
                rest = rest[2:] if rest[0] == "-a" else rest[1:]
            if rest:
                self.argv(rest, stdin_text, depth + 1)
            return
        answer = effects(argv)
        if answer is None:
            return
        if all(isinstance(w, str) for w in argv):
            # Only literal lines count: the interpreter resolves the words the census leaves unknown.
            self.answers[head] += 1
            if answer.unknown is not None:
                self.unknown.setdefault(head, Counter())[answer.unknown] += 1
        for inner, _env, _cwd in answer.runs:
            if inner:
                self.argv(list(inner), stdin_text, depth + 1)
        for box in answer.containers:
            if box.argv:
                self.argv(list(box.argv), stdin_text, depth + 1)
        for text, _args in answer.shell_text:
            if isinstance(text, str):
                self.text(text.encode("utf-8", "surrogatepass"), depth + 1)
        if answer.shell_stdin and stdin_text is not None:
            self.text(stdin_text, depth + 1)


def _heredoc_body(command: Any, src: bytes) -> bytes | None:
    """The body of a heredoc fed to the command (`bash -s <<EOF`), if any."""
    parent = command.parent
    if parent is None or parent.type != "redirected_statement":
        return None
    for r in parent.named_children:
        if r.type == "heredoc_redirect":
            for c in r.named_children:
                if c.type == "heredoc_body":
                    return src[c.start_byte:c.end_byte]
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", action="append", type=Path, required=True,
                    help="a history's git work tree or directory (repeatable: InferenceX, srt-slurm)")
    ap.add_argument("--max-commits", type=int, default=None, help="walk only the newest N commits of each")
    ap.add_argument("--max-blobs", type=int, default=None, help="stop after N shell blobs of each")
    ap.add_argument("--write", type=Path, default=None, help="write the sorted names to this file")
    ap.add_argument("--show-unknown", type=int, default=25, metavar="N",
                    help="list the N names the vocabulary most often answers unknown, with their reasons")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    census = Census()
    started = time.monotonic()
    for repo in args.repo:
        before = census.blobs
        for k, (_oid, _path, data) in enumerate(shell_blobs(repo, max_commits=args.max_commits,
                                                            max_blobs=args.max_blobs), 1):
            census.blob(data)
            if not args.quiet and k % 1000 == 0:
                print(f"  {repo}: {k} blobs, {len(census.names)} names, {time.monotonic() - started:.0f} s",
                      file=sys.stderr)
        print(f"{repo}: {census.blobs - before} shell blobs")
    names = census.commands()
    classes = Counter(name_class(n) for n in names)
    print(f"blobs: {census.blobs} (unparsed {census.unparsed})")
    print(f"functions defined: {len(census.functions)}")
    print(f"distinct command names: {len(names)} "
          f"({sum(1 for n in census.names if n in census.functions)} more are script functions, "
          f"{len(set(census.names) - census.clean_names - census.functions)} only in blobs with grammar errors)")
    broken = sorted(set(census.names) - census.clean_names - census.functions)
    print(f"  left out, only in blobs with grammar errors: {' '.join(broken)}")
    for cls, count in sorted(classes.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {cls}: {count}" + (f" ({' '.join(n for n in names if name_class(n) == cls)})"
                                     if cls == "unknown" else ""))
    asked, unknown = sum(census.answers.values()), sum(sum(c.values()) for c in census.unknown.values())
    print(f"command lines whose words are all literal: {asked}; answered unknown: {unknown}")
    for name, reasons in sorted(census.unknown.items(), key=lambda kv: -sum(kv[1].values()))[:args.show_unknown]:
        top = "; ".join(f"{r} x{c}" for r, c in reasons.most_common(3))
        print(f"  {name}: {sum(reasons.values())}/{census.answers[name]}: {top}")
    if args.write is not None:
        repos = " ".join(f"--repo {r}" for r in args.repo)
        header = ("# Every literal command name in the shell scripts of the histories below, functions left out.\n"
                  f"# Regenerate: python bench/vocabulary_census.py {repos} --write {args.write}\n")
        args.write.write_text(header + "".join(n + "\n" for n in names))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
