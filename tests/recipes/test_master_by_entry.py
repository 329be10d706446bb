"""A master config parsed entry by entry gives what the whole parse gives, and an entry a PR did
not change is parsed once for base and head."""
from __future__ import annotations

import json

import pytest

from recipes import master
from recipes.errors import RecipeError
from recipes.yamlio import clear_caches, load_yaml

MASTER = """\
# NVIDIA single-node and multi-node configs.
dsr1-fp8-b200-sglang:
  image: lmsysorg/sglang:v0.5.2-cu129
  model: deepseek-ai/DeepSeek-R1-0528
  model-prefix: dsr1
  runner: b200
  precision: fp8
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, ep: 1, conc-start: 4, conc-end: 64 }

# A comment between entries belongs to the entry above.
gptoss-fp4-b200-vllm:
  image: vllm/vllm-openai:v0.11.0
  model: openai/gpt-oss-120b
  model-prefix: gptoss
  runner: b200
  precision: fp4
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 2, conc-start: 4, conc-end: 128 }
      - { tp: 4, conc-list: [4, 8, "16"] }
kimik2-fp4-gb200-dynamo-trt:
  image: nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.5.1
  model: moonshotai/Kimi-K2
  model-prefix: kimik2
  runner: gb200
  precision: fp4
  framework: dynamo-trt
  multinode: true
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - spec-decoding: mtp
        conc-list: [8, 16]
        prefill: { num-worker: 1, tp: 4, ep: 4, dp-attn: true }
        decode:
          num-worker: 1
          tp: 8
          additional-settings:
          - "CONFIG_FILE=recipes/trtllm/kimi/1p1d.yaml"
"""


def _whole(text: str, path: str = "configs/nvidia-master.yaml") -> master.MasterFile:
    try:
        doc = load_yaml(text, path)
    except RecipeError as e:
        return master.MasterFile(path=path, findings=[e.finding])
    return master.master_from_doc(doc)


def _dump(mf: master.MasterFile) -> str:
    return json.dumps({"entries": {k: [e.model_dump(mode="json"), e._raw] for k, e in mf.entries.items()},
                       "findings": [f.model_dump(mode="json") for f in mf.findings]}, sort_keys=True, default=str)


@pytest.fixture(autouse=True)
def _fresh_cache():
    master.clear_entry_cache()
    clear_caches()
    yield
    master.clear_entry_cache()
    clear_caches()


def test_entry_by_entry_equals_the_whole_parse():
    path = "configs/nvidia-master.yaml"
    by_entry = master._parse_by_entry(MASTER, path)
    assert by_entry is not None and list(by_entry.entries) == [
        "dsr1-fp8-b200-sglang", "gptoss-fp4-b200-vllm", "kimik2-fp4-gb200-dynamo-trt"]
    assert _dump(by_entry) == _dump(_whole(MASTER, path))
    # Lines are the file's, not the block's: the third entry starts on line 34.
    assert by_entry.entries["kimik2-fp4-gb200-dynamo-trt"].line == MASTER.split("\n").index(
        "kimik2-fp4-gb200-dynamo-trt:") + 1
    # Findings too: a wrong type in the second entry is reported at its line in the file.
    broken = MASTER.replace("  multinode: false\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192",
                            "  multinode: maybe\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192")
    assert broken != MASTER
    got, want = master.parse_master(broken, path), _whole(broken, path)
    assert _dump(got) == _dump(want) and any(f.code == "type" for f in got.findings)


def test_an_unchanged_entry_is_the_same_object_in_base_and_head():
    base = master.parse_master(MASTER, "configs/nvidia-master.yaml")
    head_text = MASTER.replace("conc-end: 128", "conc-end: 256")
    head = master.parse_master(head_text, "configs/nvidia-master.yaml")
    assert head.entries["dsr1-fp8-b200-sglang"] is base.entries["dsr1-fp8-b200-sglang"]
    assert head.entries["gptoss-fp4-b200-vllm"] is not base.entries["gptoss-fp4-b200-vllm"]
    assert _dump(head) == _dump(_whole(head_text))


def test_an_entry_shifted_by_lines_added_above_is_not_composed_again(monkeypatch):
    # Real shape: a PR adds an entry in the middle of nvidia-master.yaml, so every entry below it
    # starts on another line at head than at base (26 of 155 at d85fa13fc0).
    path = "configs/nvidia-master.yaml"
    base = master.parse_master(MASTER, path)
    added = "new-fp8-b200-sglang:\n  image: lmsysorg/sglang:v0.5.3\n  model: org/new\n"
    head_text = MASTER.replace("gptoss-fp4-b200-vllm:", added + "gptoss-fp4-b200-vllm:", 1)
    composed: list[str] = []
    from recipes import yamlio

    real = yamlio.load_yaml  # what yamlio.load_chunk composes with
    monkeypatch.setattr(yamlio, "load_yaml", lambda text, p, **kw: composed.append(text) or real(text, p, **kw))
    head = master.parse_master(head_text, path)
    assert composed == [added]  # only the new entry; the two below it are rebuilt from their YAML
    assert _dump(head) == _dump(_whole(head_text, path))  # with their own, shifted lines
    moved = head.entries["kimik2-fp4-gb200-dynamo-trt"]
    assert moved.line == base.entries["kimik2-fp4-gb200-dynamo-trt"].line + added.count("\n")
    assert head.entries["dsr1-fp8-b200-sglang"] is base.entries["dsr1-fp8-b200-sglang"]


@pytest.mark.parametrize("text", [
    # an anchor and an alias across entries: only the whole document resolves them
    MASTER.replace("  runner: b200\n  precision: fp8", "  runner: &r b200\n  precision: fp8", 1)
          .replace("  runner: b200\n  precision: fp4", "  runner: *r\n  precision: fp4", 1),
    # the same key twice: the whole parse reports it
    MASTER + "dsr1-fp8-b200-sglang:\n  image: x\n",
    # a quoted key, a document marker, a sequence at column 0
    MASTER.replace("gptoss-fp4-b200-vllm:", '"gptoss-fp4-b200-vllm":'),
    "---\n" + MASTER,
    MASTER.replace("kimik2-fp4-gb200-dynamo-trt:\n", "kimik2-fp4-gb200-dynamo-trt:\n- x\n", 1),
    # a block that does not parse on its own, and a key that is not text
    MASTER.replace("    - isl: 8192", "    - isl: [8192", 1),
    MASTER.replace("gptoss-fp4-b200-vllm:", "1024:"),
    # CRLF line ends
    MASTER.replace("\n", "\r\n"),
    # indented text before the first key (the whole parse refuses it; it used to be dropped), a tab
    "  stray: 1\n" + MASTER,
    MASTER.replace("gptoss-fp4-b200-vllm:", "\tgptoss-fp4-b200-vllm:", 1),
])
def test_anything_but_a_plain_mapping_of_names_is_parsed_whole(text):
    assert master._parse_by_entry(text, "configs/nvidia-master.yaml") is None
    assert _dump(master.parse_master(text, "configs/nvidia-master.yaml")) == _dump(_whole(text))


def test_a_block_scalar_ending_an_entry_keeps_its_last_newline_as_in_the_whole_file():
    # Each entry's text runs to the next key, newline included (yamlio.top_level_chunks); before,
    # the line break was cut, and a `|` scalar closing an entry read "last" instead of "last\n".
    path = "configs/nvidia-master.yaml"
    cut = MASTER.index("gptoss-fp4-b200-vllm:")
    text = MASTER[:cut].rstrip("\n") + "\n  notes: |\n    last\n" + MASTER[cut:]
    by_entry = master._parse_by_entry(text, path)
    assert by_entry is not None
    assert by_entry.entries["dsr1-fp8-b200-sglang"].extra["notes"] == "last\n"
    assert _dump(by_entry) == _dump(_whole(text, path))
