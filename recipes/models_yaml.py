"""The model-settings program of the AMD disagg server scripts, read without running it.

`benchmarks/multi_node/amd_utils/server_sglang.sh` (and `server_vllm.sh`) set their
per-model server flags with an inline Python program run as `eval "$(python3 -c "...")"`.
In outline, it yaml-loads the file a `${MODELS_YAML}` names, picks the entry `<MODEL_NAME>-AgentX`
when `IS_AGENTIC` is true and `<MODEL_NAME>-DI` otherwise (falling back to the bare name when
that key is absent), and prints one `NAME="<field of the entry, or a default>"` line per
shell variable (`MODEL_BASE_FLAGS`, `MODEL_MTP_FLAGS`, prefill/decode settings, ...).

`read_program` recognises that shape from the program's syntax tree (the text as bash hands
it to Python: `\\"` already `"`): the file it loads (a string, usually a `${VAR}` the caller
expands), the entry it picks (`<name>-AgentX` when the agentic test holds, else `<name>-DI`,
falling back to `<name>` when the program does; or plainly `<name>`), and every
`print(f'NAME="{...}"')` whose value is a field of the entry (`m.get("k", default)`,
through nested `.get`s, simple assignments and escaping helpers made only of `.replace`
calls). Anything else (a value computed by other code) is not known: that variable is
simply not reported. `select_entry` applies the program to a file's text with the caller's
values and gives each reported variable its value and the file line it comes from (None for
the program's default). Pure: no I/O, memoized per text.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .errors import RecipeError
from .yamlio import YamlDoc, load_yaml

MSG_NOT_MAPPING = "{path} is not a mapping of model names"
MSG_NO_ENTRY = "{path} has no entry {key}"
MSG_NO_FALLBACK = "{path} has no entry {key} and no fallback entry {model}"
MSG_ENTRY_NOT_MAPPING = "{path}:{line}: entry {key} is not a mapping"

_ASSIGN = re.compile(r"^([A-Za-z_]\w*)=([\"'])$")
_BASH_ESCAPE = re.compile(r"\\([$`\"\\\n])")
_HEREDOC_ESCAPE = re.compile(r"\\([$`\\\n])")
AGENTIC_SUFFIX, DI_SUFFIX = "-AgentX", "-DI"


@dataclass(frozen=True)
class ModelsProgram:
    """What the program reads: `config` (the path as written, e.g. `${MODELS_YAML}`), the
    model name as written, the agentic test's text and the values it takes as true (None: the
    bare name is the key), whether the bare name is the fallback, and per printed variable
    the field it prints ((keys), default) or None when it is computed otherwise."""

    config: str
    model: str
    agentic: str | None
    truthy: tuple[str, ...]
    fallback: bool
    outputs: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class EntryValue:
    var: str
    value: str | None  # None: computed by code the bot does not read
    line: int | None  # the file line of the field; None: the program's default


@dataclass(frozen=True)
class ModelsEntry:
    """The entry a program selects from a file, and what it prints from it."""

    path: str
    key: str
    line: int | None
    values: tuple[EntryValue, ...]
    data: Any = field(compare=False, hash=False)  # the entry as parsed (for comparing a base and a head)


def bash_unescaped(text: str) -> str:
    """A bash double-quoted string's text as the program receives it (`\\"` -> `"`)."""
    return _BASH_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def heredoc_unescaped(text: str) -> str:
    """An unquoted here-document's body as the program receives it (`\\$` -> `$`; `\\"` stays)."""
    return _HEREDOC_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


# --- the program -------------------------------------------------------------------------

_FIELD, _CONST, _ENTRY = "field", "const", "entry"


@lru_cache(maxsize=64)
def read_program(code: str) -> ModelsProgram | None:
    """The program's reading of a models file, or None when it is not that shape."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _Reader(tree).program()


class _Reader:
    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.env: dict[str, ast.AST | None] = {}
        self.escapers: set[str] = set()
        self.loaded: set[str] = set()  # names bound to the parsed file
        self.entry: str | None = None
        self.entry_key: ast.AST | None = None
        self.config: str | None = None
        self.outputs: list[tuple[str, Any]] = []

    def program(self) -> ModelsProgram | None:
        try:
            self.block(self.tree.body)
        except RecursionError:
            return None
        if self.entry is None or self.config is None or not self.outputs:
            return None
        picked = self.selection()
        if picked is None:
            return None
        model, agentic, truthy, fallback = picked
        return ModelsProgram(self.config, model, agentic, truthy, fallback, tuple(self.outputs))

    # Statements in order: the value a name has at a print is its last assignment before it.
    def block(self, body: list[ast.stmt]) -> None:
        for st in body:
            if isinstance(st, ast.FunctionDef):
                if _is_escaper(st):
                    self.escapers.add(st.name)
                else:
                    self.escapers.discard(st.name)
            elif isinstance(st, ast.With):
                for item in st.items:
                    path = self.string(item.context_expr.args[0]) if _is_call(item.context_expr, "open") and \
                        item.context_expr.args else None
                    if path is not None and isinstance(item.optional_vars, ast.Name):
                        self.config = path
                self.block(st.body)
            elif isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                self.assign(st.targets[0].id, st.value)
            elif isinstance(st, ast.Expr) and _is_call(st.value, "print"):
                self.output(st.value)
            else:
                for node in ast.walk(st):  # names bound in code not read here are unknown after it
                    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                        self.env[node.id] = None

    def assign(self, name: str, value: ast.AST) -> None:
        if _is_load(value):
            self.loaded.add(name)
        elif isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name) and value.value.id in self.loaded:
            self.entry, self.entry_key = name, value.slice
        elif (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get"
              and _is_load(value.func.value) and value.args):
            self.entry, self.entry_key = name, value.args[0]
        self.env[name] = value

    def string(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name) and self.env.get(node.id) is not None:
            return self.string(self.env[node.id])
        return None

    def output(self, call: ast.Call) -> None:
        if len(call.args) != 1 or not isinstance(call.args[0], ast.JoinedStr):
            return
        parts = call.args[0].values
        if len(parts) != 3 or not isinstance(parts[1], ast.FormattedValue):
            return
        head, tail = parts[0], parts[2]
        if not (isinstance(head, ast.Constant) and isinstance(tail, ast.Constant)):
            return
        m = _ASSIGN.match(str(head.value))
        if not m or tail.value != m.group(2):
            return
        val = self.value(parts[1].value, 0)
        self.outputs.append((m.group(1), val if val and val[0] == _FIELD else None))

    def value(self, node: ast.AST, depth: int) -> tuple | None:
        """(field, keys, default) / (const, v) / (entry, keys), or None when not known."""
        if depth > 20:
            return None
        if isinstance(node, ast.Constant):
            return (_CONST, node.value)
        if isinstance(node, (ast.Dict, ast.List, ast.Tuple)) and not getattr(node, "keys", None) and \
                not getattr(node, "elts", None):
            return (_CONST, {})
        if isinstance(node, ast.Name):
            if node.id == self.entry:
                return (_ENTRY, ())
            bound = self.env.get(node.id)
            return self.value(bound, depth + 1) if bound is not None else None
        if not isinstance(node, ast.Call):
            return None
        if isinstance(node.func, ast.Name) and node.func.id in self.escapers | {"str"} and len(node.args) == 1:
            return self.value(node.args[0], depth + 1)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "get" and 1 <= len(node.args) <= 2:
            key = node.args[0]
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return None
            base = self.value(node.func.value, depth + 1)
            default = self.value(node.args[1], depth + 1) if len(node.args) == 2 else (_CONST, None)
            if base is None or default is None:
                return None
            if base[0] == _ENTRY or (base[0] == _FIELD and base[2] == (_CONST, {})):
                return (_FIELD, base[1] + (key.value,), default)
        return None

    def selection(self) -> tuple[str, str | None, tuple[str, ...], bool] | None:
        """(model name as written, agentic test text, its true values, bare-name fallback)."""
        key = self.entry_key
        direct = self.string(key) if key is not None else None
        if direct is not None and not isinstance(key, ast.Name):
            return direct, None, (), False
        if not isinstance(key, ast.Name):
            return None
        values = [n.value for n in ast.walk(self.tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
                  and isinstance(n.targets[0], ast.Name) and n.targets[0].id == key.id]
        if len(values) == 1 and self.string(values[0]) is not None:
            return self.string(values[0]), None, (), False
        choice = next((v for v in values if isinstance(v, ast.IfExp)), None)
        if choice is None:
            return None
        agentic = _suffixed(choice.body, AGENTIC_SUFFIX)
        di = _suffixed(choice.orelse, DI_SUFFIX)
        if agentic is None or agentic != di or not isinstance(choice.test, ast.Name):
            return None
        model = self.string(ast.Name(id=agentic, ctx=ast.Load()))
        test = _assigned(self.tree, choice.test.id)
        read = _truth_test(test) if test is not None else None
        if model is None or read is None:
            return None
        fallback = any(isinstance(v, ast.Name) and v.id == agentic for v in values)
        if len(values) != 1 + fallback:
            return None
        return model, read[0], read[1], fallback


def _is_call(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _is_load(node: ast.AST) -> bool:
    """`yaml.safe_load(...)`."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "safe_load"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "yaml")


def _is_escaper(fn: ast.FunctionDef) -> bool:
    """A one-argument helper returning its argument through `.replace` calls only."""
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(fn.args.args) != 1 or len(body) != 1 or not isinstance(body[0], ast.Return):
        return False
    node = body[0].value
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replace":
        node = node.func.value
    return isinstance(node, ast.Name) and node.id == fn.args.args[0].arg and node is not body[0].value


def _suffixed(node: ast.AST, suffix: str) -> str | None:
    """The variable of `f'{name}<suffix>'`."""
    if isinstance(node, ast.JoinedStr) and len(node.values) == 2:
        fv, tail = node.values
        if isinstance(fv, ast.FormattedValue) and isinstance(fv.value, ast.Name) and \
                isinstance(tail, ast.Constant) and tail.value == suffix:
            return fv.value.id
    return None


def _assigned(tree: ast.Module, name: str) -> ast.AST | None:
    found = [n.value for n in ast.walk(tree) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name]
    return found[0] if len(found) == 1 else None


def _truth_test(node: ast.AST) -> tuple[str, tuple[str, ...]] | None:
    """`'<text>'.strip().lower() in (<words>)`: the text and the words it takes as true."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In)):
        return None
    options = node.comparators[0]
    if not isinstance(options, (ast.Tuple, ast.List, ast.Set)) or \
            not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in options.elts):
        return None
    left, methods = node.left, []
    while isinstance(left, ast.Call) and isinstance(left.func, ast.Attribute) and not left.args:
        methods.append(left.func.attr)
        left = left.func.value
    if not (isinstance(left, ast.Constant) and isinstance(left.value, str)) or set(methods) - {"strip", "lower"}:
        return None
    return left.value, tuple(e.value for e in options.elts)


# --- the file ----------------------------------------------------------------------------

@lru_cache(maxsize=32)
def _doc(data: bytes, path: str) -> YamlDoc:
    return load_yaml(data, path)


def entry_key(program: ModelsProgram, model: str, agentic: str | None, keys: Any) -> tuple[str | None, list[str]]:
    """The key the program picks among `keys` for these values, and the keys it tried."""
    if program.agentic is None:
        return (model if model in keys else None), [model]
    is_agentic = (agentic or "").strip().lower() in program.truthy
    first = f"{model}{AGENTIC_SUFFIX if is_agentic else DI_SUFFIX}"
    tried = [first] + ([model] if program.fallback else [])
    return next((k for k in tried if k in keys), None), tried


def select_entry(data: bytes, path: str, program: ModelsProgram, model: str,
                 agentic: str | None) -> ModelsEntry | str:
    """The entry the program selects and the variables it prints; a text saying why not."""
    try:
        doc = _doc(data, path)
    except RecipeError as e:
        return str(e.finding)
    models = doc.data
    if not isinstance(models, dict):
        return MSG_NOT_MAPPING.format(path=path)
    key, tried = entry_key(program, model, agentic, models)
    if key is None:
        if len(tried) > 1:
            return MSG_NO_FALLBACK.format(path=path, key=tried[0], model=tried[1])
        return MSG_NO_ENTRY.format(path=path, key=tried[0])
    entry = models[key]
    if not isinstance(entry, dict):
        return MSG_ENTRY_NOT_MAPPING.format(path=path, line=doc.line(key), key=key)
    values = tuple(EntryValue(var, *_resolve(spec, entry, doc, key)) if spec is not None else EntryValue(var, None, None)
                   for var, spec in program.outputs)
    return ModelsEntry(path=path, key=key, line=doc.line(key), values=values, data=entry)


_UNREADABLE = object()


def entry_changed(before: bytes | None, after: ModelsEntry) -> bool:
    """Whether the entry a program selected at the head differs from the same key's entry in
    the file's base text (absent, changed, or a base the bot cannot parse)."""
    if before is None:
        return True
    try:
        models = _doc(before, after.path).data
    except RecipeError:
        return True
    old = models.get(after.key, _UNREADABLE) if isinstance(models, dict) else _UNREADABLE
    return old is _UNREADABLE or old != after.data


def _resolve(spec: tuple, entry: dict, doc: YamlDoc, key: str) -> tuple[str | None, int | None]:
    if spec[0] == _CONST:
        v = spec[1]
        return (None, None) if isinstance(v, (dict, list)) else (_text(v), None)
    node: Any = entry
    for k in spec[1]:
        if not isinstance(node, dict) or k not in node:
            return _resolve(spec[2], entry, doc, key)
        node = node[k]
    if isinstance(node, (dict, list)):
        return None, None
    return _text(node), doc.line(key, *spec[1])


def _text(v: Any) -> str:
    return f"{v}"  # as the program's f-string prints it
