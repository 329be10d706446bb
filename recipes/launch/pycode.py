"""What Python code the launch runs writes: read with Python's own parser (nested parentheses,
keyword modes, `Path(...).open("w")`), with a regular expression as the fallback for text that
is not plain Python (a here-document with shell expansions). Used by the interpreter for the
code it runs (`python3 - <<EOF`, `python3 -c`, a repository script) and by the script analysis
(recipes.bash.detect).
"""
from __future__ import annotations

import ast
import functools
import re

CUSTOMIZE = re.compile(r"sitecustomize|usercustomize|\.pth\b|PYTHONSTARTUP")
IMPORT_LOOKUP = re.compile(r"__file__|importlib|find_spec|getsitepackages|getusersitepackages|inspect\.getfile|sysconfig"
                           r"|site-packages|dist-packages")
PY_WRITE = re.compile(
    r"open\([^)]*['\"][^'\"]*[wax+][^'\"]*['\"]|\.write_text\(|\.write_bytes\(|shutil\.(?:copy|copyfile|copy2|move)\("
    r"|os\.(?:replace|rename)\(|inplace\s*=\s*True"
)
PY_LITERAL_PATH = re.compile(r"['\"](/[^'\"\s]+)['\"]")
# `[ \t]*`, not `\s*`, after the line start: `\s*` runs over the blank lines below, so a run of
# them was read again from each of its lines (quadratic).
PY_IMPORTED = re.compile(r"(?:^|;)[ \t]*(?:import|from)\s+([A-Za-z_][\w., ]*)", re.M)
FIND_SPEC = re.compile(r"(?:find_spec|import_module)\(\s*['\"]([\w.]+)")
PY_WRITE_CALLS = frozenset({"write_text", "write_bytes", "copy", "copyfile", "copy2", "copytree", "move",
                            "replace", "rename", "symlink", "symlink_to", "link"})
# Where a write found through an import lookup lands: the installed package of the module named.
SITE_PACKAGES = "<site-packages>"
# Code longer than this is not parsed (a bound, like every input of the interpreter).
MAX_CODE = 200_000


def _write_call(node: ast.Call) -> bool:
    fn = node.func
    name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
    if name == "open":
        mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
        if isinstance(fn, ast.Attribute) and not node.args:  # Path(...).open(mode=...) / .open("w")
            mode = next((k.value for k in node.keywords if k.arg == "mode"), None)
        if isinstance(fn, ast.Attribute) and node.args and isinstance(node.args[0], ast.Constant):
            mode = node.args[0] if len(node.args) == 1 else mode
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) & set("wax+"):
            return True
        return mode is not None and not isinstance(mode, ast.Constant)  # a mode only known at run time
    if name in PY_WRITE_CALLS and isinstance(fn, ast.Attribute):
        owner = fn.value.id if isinstance(fn.value, ast.Name) else ""
        return name in ("write_text", "write_bytes", "rename", "symlink_to") or owner in ("os", "shutil")
    return any(k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value for k in node.keywords)


@functools.lru_cache(maxsize=512)
def write_line(code: str) -> int | None:
    """The line of the first call that writes a file (1 when only the fallback sees one), else None.
    Kept per text: the traces of one review run the same repository scripts again and again."""
    if len(code) > MAX_CODE:
        return 1 if PY_WRITE.search(code[:MAX_CODE]) else None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return 1 if PY_WRITE.search(code) else None
    return _first_write(tree)


def _first_write(tree: ast.AST) -> int | None:
    """The first line of a call in the tree that writes a file (`_write_call`). Every node is
    visited as `ast.walk` visits them, without its generators (which cost more than the parse
    on a long here-document)."""
    first = None
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call) and _write_call(node) and (first is None or node.lineno < first):
            first = node.lineno
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
    return first


def py_writes(code: str) -> bool:
    """Whether Python code writes a file."""
    return write_line(code) is not None


def imported_modules(code: str) -> list[str]:
    """The modules the code imports or looks up by name (`find_spec("vllm")`)."""
    mods = FIND_SPEC.findall(code)
    for imported in PY_IMPORTED.findall(code):
        mods += [m.strip().split(" ")[0] for m in imported.split(",")]
    return [m for m in mods if m]


@functools.lru_cache(maxsize=512)
def _named_targets(code: str) -> tuple[tuple[str, ...], bool, tuple[str, ...] | None]:
    """What code's text names that it may write: the literal absolute paths, whether it names a
    start-up hook, and the modules it imports when it looks an installed package up (else None).
    Kept per text, as `write_line`."""
    literals = tuple(m.group(1) for m in PY_LITERAL_PATH.finditer(code[:MAX_CODE]))
    looked_up = tuple(imported_modules(code)) if IMPORT_LOOKUP.search(code) else None
    return literals, bool(CUSTOMIZE.search(code)), looked_up


def write_targets(code: str, engine_packages) -> tuple[int, list[str | None]] | None:
    """Where code that writes a file writes, as far as its text says: (the line of the first
    write, targets). A target is a literal absolute path the code names, the installed package of
    an engine it finds through an import lookup (`<site-packages>/vllm`, `vllm.__file__`), a
    start-up hook; None for a write the text does not place (a path found at run time). None
    when the code writes no file."""
    line = write_line(code)
    if line is None:
        return None
    literals, customize, looked_up = _named_targets(code)
    targets: list[str | None] = list(literals)
    if customize:
        targets.append(f"{SITE_PACKAGES}/sitecustomize.py")
    if looked_up is not None:
        engines = [m for m in looked_up if m.split(".")[0] in engine_packages]
        targets += [f"{SITE_PACKAGES}/{m.split('.')[0]}" for m in dict.fromkeys(engines)] or [None]
    return line, list(dict.fromkeys(targets)) or [None]
