"""The AMD disagg server scripts' model-settings program (recipes.models_yaml), on small
programs and files shaped like server_sglang.sh's `python3 -c` and models.yaml."""
from __future__ import annotations

from recipes.models_yaml import bash_unescaped, read_program, select_entry

# As written inside `eval "$(python3 -c "...")"` (bash-escaped quotes).
SELECTING = r"""
import yaml, sys
config_path = '${MODELS_YAML}'
model_name = '${MODEL_NAME}'
is_agentic = '${IS_AGENTIC:-0}'.strip().lower() in ('1', 'true')
model_key = f'{model_name}-AgentX' if is_agentic else f'{model_name}-DI'
with open(config_path) as f:
    models = yaml.safe_load(f)
if model_key not in models:
    if model_name in models:
        model_key = model_name
    else:
        print(f'echo \"ERROR\"; exit 1')
        sys.exit(0)
m = models[model_key]
def esc(s):
    return s.replace('\"', '\\\"')
prefill = m.get('prefill', {})
print(f'MODEL_BASE_FLAGS=\"{esc(m.get(\"base_flags\", \"\"))}\"')
print(f'PREFILL_MEM=\"{prefill.get(\"mem_fraction_static\", 0.8)}\"')
print(f'COMPUTED=\"{len(m)}\"')
"""
BARE = """
import yaml
with open('${MODELS_YAML}') as f:
    models = yaml.safe_load(f)
model_name = '${MODEL_NAME}'
m = models[model_name]
print(f'PREFILL_SERVER_CONFIG="{m.get("prefill_flags", "--tensor-parallel-size 8")}"')
"""
MODELS = b"""M:
  base_flags: "--bare"
M-DI:
  base_flags: "--di --kv-cache-dtype fp8"
  prefill:
    mem_fraction_static: 0.7
M-AgentX:
  base_flags: "--agentx"
Only-AgentX-AgentX:
  base_flags: "--x"
"""


def _program(text: str):
    p = read_program(bash_unescaped(text))
    assert p is not None
    return p


def test_the_program_is_read_with_its_file_key_and_printed_fields():
    p = _program(SELECTING)
    assert (p.config, p.model, p.agentic, p.fallback) == ("${MODELS_YAML}", "${MODEL_NAME}", "${IS_AGENTIC:-0}", True)
    printed = dict(p.outputs)
    assert printed["MODEL_BASE_FLAGS"][1] == ("base_flags",)
    assert printed["PREFILL_MEM"][1] == ("prefill", "mem_fraction_static")
    assert printed["COMPUTED"] is None  # computed by other code: not known


def test_agentx_di_and_the_bare_fallback_are_keyed_like_the_program():
    p = _program(SELECTING)
    agentx = select_entry(MODELS, "u/models.yaml", p, "M", "1")
    assert (agentx.key, agentx.line) == ("M-AgentX", 7)
    di = select_entry(MODELS, "u/models.yaml", p, "M", "0")
    assert di.key == "M-DI"
    values = {v.var: (v.value, v.line) for v in di.values}
    assert values["MODEL_BASE_FLAGS"] == ("--di --kv-cache-dtype fp8", 4)
    assert values["PREFILL_MEM"] == ("0.7", 6)
    assert values["COMPUTED"] == (None, None)
    models = MODELS.replace(b"M-DI:", b"N-DI:").replace(b"M-AgentX:", b"N-AgentX:")
    bare = select_entry(models, "u/models.yaml", p, "M", "true")
    assert bare.key == "M"
    assert {v.var: (v.value, v.line) for v in bare.values}["PREFILL_MEM"] == ("0.8", None)  # the program's default


def test_a_missing_entry_says_which_keys_were_tried():
    why = select_entry(MODELS, "u/models.yaml", _program(SELECTING), "Absent", "0")
    assert why == "u/models.yaml has no entry Absent-DI and no fallback entry Absent"
    why = select_entry(MODELS, "u/models.yaml", _program(BARE), "M-X", None)
    assert why == "u/models.yaml has no entry M-X"
    assert "not a mapping" in select_entry(b"- a\n", "u/models.yaml", _program(BARE), "M", None)
    assert select_entry(b"a: [\n", "u/models.yaml", _program(BARE), "M", None).startswith("u/models.yaml")


def test_a_bare_program_keys_by_the_name():
    p = _program(BARE)
    assert p.agentic is None
    e = select_entry(MODELS, "u/models.yaml", p, "M", None)
    assert e.key == "M" and e.values[0].value == "--tensor-parallel-size 8" and e.values[0].line is None


def test_programs_of_other_shapes_are_not_read():
    assert read_program("print(1)") is None
    assert read_program("import yaml\nm = yaml.safe_load(open(x))[pick()]\nprint(f'A=\"{m}\"')") is None
    assert read_program("def (:") is None
