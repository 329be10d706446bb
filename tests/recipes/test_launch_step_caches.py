"""What the interpreter keeps to make a step cheaper (recipes/launch/frame.py, plans.py) never
changes what a command sees: the environment follows every export, unset and `local` that hides
an exported name, and a node's plan is its own node's, never another tree's."""
from __future__ import annotations

import pytest

from recipes.launch.frame import new_frame
from recipes.launch.plans import plan
from recipes.launch.state import State, Var
from recipes.launch.trace import EXEC
from recipes.launch.fs import WORKSPACE
from tests.recipes.test_launch_shell import run


def envs(trace):
    return [dict(e.env) for e in trace.of(EXEC)]


def test_the_environment_follows_exports_unsets_and_locals_between_commands():
    trace, _ = run('export A=1\nrun\nrun\nexport A=2\nrun\n'
                   'f() { run; local A=3; run; local B=4; export B; run; }\nf\nrun\nunset A\nrun\nC=5 run\nrun\n')
    assert envs(trace) == [
        {"A": "1"}, {"A": "1"}, {"A": "2"},
        {"A": "2"},
        {},                      # `local A` hides the exported A in the function
        {"B": "4"},
        {"A": "2"},              # back in the caller: A again, the function's B gone with it
        {}, {"C": "5"}, {},
    ]


def test_a_frame_changes_version_only_when_what_the_environment_reads_may_change():
    top = new_frame({"X": Var("1", exported=True)}, outermost=True)
    v = top.version
    top["plain"] = Var("a")              # a new unexported name in the process's own frame hides nothing
    assert top.version == v
    top["plain"] = Var("b")
    assert top.version == v
    top["X"] = Var("2", exported=True)   # an exported value changes
    assert top.version != v
    copy = top.copy()
    assert copy.version == top.version and copy == top
    inner = new_frame()
    w = inner.version
    inner["X"] = Var("local")            # a function's new name may hide the caller's exported one
    assert inner.version != w
    state = State(frames=[top, inner])
    assert "X" not in state.exported()
    del inner["X"]
    assert state.exported()["X"] == "2"


def test_nodes_at_the_same_place_of_two_texts_have_their_own_plans():
    from recipes.bash.walker import parse_bash

    def text(node, src):
        return src[node.start_byte:node.end_byte]

    trees = [parse_bash(data) for data in (b"echo a\n", b"echo b\n")]
    nodes = [tree.root_node.named_children[0] for tree, _ in trees]
    assert (nodes[0].start_byte, nodes[0].end_byte) == (nodes[1].start_byte, nodes[1].end_byte)
    assert [plan("test-text", n, src, text) for n, (_, src) in zip(nodes, trees)] == [b"echo a", b"echo b"]
    # Asked again, each node keeps its own.
    assert plan("test-text", nodes[0], trees[0][1], text) == b"echo a"


def test_a_table_its_callers_hold_is_emptied_by_forget_and_filled_again():
    from recipes.launch.plans import forget, table

    kept = table("test-forget")
    assert plan("test-forget", "node", b"src", lambda n, s: (n, s)) == ("node", b"src")
    assert kept == {"node": ("node", b"src")}
    forget()
    assert kept == {} and table("test-forget") is kept
    assert plan("test-forget", "node", b"other", lambda n, s: (n, s)) == ("node", b"other")
    assert kept == {"node": ("node", b"other")}


def test_an_effect_made_without_its_init_is_the_effect_its_init_makes():
    from recipes.launch.trace import Effect, Site, effect

    given = dict(kind=EXEC, site=Site("run.sh", 3, 4), chain=(Site("job", 1),), argv=("vllm", "serve"),
                 env=(("A", "1"),), client=True)
    made = effect(**given)
    assert made == Effect(**given) and repr(made) == repr(Effect(**given))
    assert hash(made) == hash(Effect(**given))
    assert made.how == "" and made.files == () and made.path is None
    with pytest.raises(TypeError):
        effect(kind=EXEC, site=Site("run.sh", 3), argument=("x",))
    with pytest.raises(TypeError):
        effect(kind=EXEC)
    with pytest.raises(AttributeError):
        made.kind = "write"  # type: ignore[misc]  # frozen as ever


def test_the_vocabulary_answer_kept_per_argv_is_the_answer_it_gives(monkeypatch):
    from recipes.launch import vocabulary
    from recipes.launch.words import Unknown

    real = vocabulary.effects
    asked = []

    def effects(argv, cwd=None):
        asked.append(tuple(argv))
        if argv[0] == "broken":
            raise ValueError("a handler's fault")
        return real(argv, cwd)

    monkeypatch.setattr(vocabulary, "_KEPT", {})
    monkeypatch.setattr(vocabulary, "effects", effects)
    argv = ("curl", "-o", "/tmp/x", "https://example.invalid/x")
    first = vocabulary.kept_effects(argv)
    assert first == real(argv) and first.downloads and vocabulary.kept_effects(argv) is first
    assert asked == [argv]  # asked once
    unknown = ("cat", Unknown("a file"))
    assert vocabulary.kept_effects(unknown) == real(unknown)
    assert vocabulary.kept_effects(("cat", Unknown("a file"))) == real(unknown) and asked.count(unknown) == 1
    assert vocabulary.kept_effects(("nosuchcommand-x",)) is None and vocabulary.kept_effects(("nosuchcommand-x",)) is None
    assert asked.count(("nosuchcommand-x",)) == 1  # "not in the vocabulary" is kept too
    for _ in range(2):
        with pytest.raises(ValueError):
            vocabulary.kept_effects(("broken",))
    assert asked.count(("broken",)) == 2  # a fault is never kept
    unhashable = ("echo", ["a", "list"])
    assert vocabulary.kept_effects(unhashable) == real(unhashable)  # type: ignore[arg-type]
    assert asked.count(unhashable) == 1 and not any(k[0] == unhashable for k in vocabulary._KEPT)


def test_inside_functions_the_environment_is_the_process_s_changed_by_each_function_frame():
    # The point's inputs (MODEL, PORT) are left out of an environment while they hold the
    # input's value; a function frame sets, hides or gives back each name it has.
    trace, _ = run('export EXTRA=x\n'
                   'g() { local MODEL=other; export MODEL; run; local EXTRA=plain; run; }\n'
                   'f() { local PORT=8000; export PORT; run; local MODEL=m1; export MODEL; run; g; run; }\n'
                   'run\nf\nrun\nexport PORT=9\nrun\nf\n', env={"MODEL": "m1", "PORT": "8000"})
    in_f = [
        {"EXTRA": "x"},                     # f's PORT holds the input's value
        {"EXTRA": "x"},                     # so does its MODEL
        {"EXTRA": "x", "MODEL": "other"},   # g's MODEL does not
        {"MODEL": "other"},                 # g's EXTRA, not exported, hides the process's
        {"EXTRA": "x"},                     # back in f
    ]
    assert envs(trace) == [
        {"EXTRA": "x"}, *in_f, {"EXTRA": "x"},
        {"EXTRA": "x", "PORT": "9"}, *in_f,  # f's PORT (the input's value) hides the changed one
    ]


def test_a_braced_name_reads_as_the_plain_name_and_names_itself_when_unset():
    trace, _ = run('A=a\nB=$UNSET\nrun "${A}" "$A" "${B}" "$B" "${UNSET}" "${LINENO}"\nf() { run "${1}" "${FUNCNAME}"; }\nf x\n')
    first, second = trace.of(EXEC)
    assert first.argv[:2] == ("run", "a") and first.argv[2] == "a" and first.argv[-1] == "3"
    # `$B` holds the unknown `$UNSET` left; `${B}` reads it as unset, naming B (as `${B:-}` would).
    assert [w.why for w in first.argv[3:6]] == ["$B is not set on this path", "$UNSET is not set on this path",
                                                "$UNSET is not set on this path"]
    assert second.argv == ("run", "x", "f")


def test_fields_of_one_text_are_the_fields_the_general_split_makes():
    from recipes.launch.state import MAX_VALUE_CHARS
    from recipes.launch.text import _fields
    from recipes.launch.words import Unknown

    assert _fields([("q", "a b")]) == ["a b"] and _fields([("q", "")]) == [""]
    assert _fields([("u_lit", "ab")]) == ["ab"] and _fields([("u_lit", "")]) == []  # an empty literal makes none
    assert _fields([("u", "a  b")]) == ["a", "b"]
    long = _fields([("q", "x" * (MAX_VALUE_CHARS + 1))])
    assert len(long) == 1 and isinstance(long[0], Unknown) and "over" in long[0].why


def test_files_an_argv_names_are_read_from_the_folder_each_time_it_runs():
    # `_naming_words` is kept per argv: the words, never the files, which depend on the folder.
    trace, _ = run('cd a\nrun --config=conf.yaml x.sh\ncd ../b\nrun --config=conf.yaml x.sh\nrun -v plain\n',
                   files={"a/conf.yaml": "a: 1\n", "b/conf.yaml": "b: 2\n"})
    named = [[path for path, _ in e.files] for e in trace.of(EXEC)]
    assert named == [["a/conf.yaml"], ["b/conf.yaml"], []]
    assert trace.of(EXEC)[0].files[0][1] != trace.of(EXEC)[1].files[0][1]


def test_named_files_of_an_argv_that_does_not_hash_and_of_the_effect_s_path():
    from recipes.launch.fs import Files
    from recipes.launch.shell import Interpreter
    from recipes.source import MemorySource

    it = Interpreter(Files(MemorySource({"c/x.yaml": "x\n", "c/y.py": "y\n"})), vocabulary=lambda argv, cwd=None: None)
    state = it.initial_state()
    listed = it.named_files(["tool", "c/x.yaml"], None, state)
    assert [p for p, _ in listed[0]] == ["c/x.yaml"]
    words = ("tool",) + ("-v",) * 64 + ("c/x.yaml",)  # past MAX_NAMED_WORDS texts: not read; the path is
    assert [p for p, _ in it.named_files(words, f"{WORKSPACE}/c/y.py", state)[0]] == ["c/y.py"]


def test_a_merge_keeps_a_variable_every_arm_left_as_it_was_and_its_frame_s_version():
    from recipes.launch.state import merge_states

    base = State(frames=[new_frame({"A": Var("x", exported=True), "R": Var("r", readonly=True)}, outermost=True)])
    arm = base.copy()
    arm.set("A", "x")          # another Var, the same value: A is merged, and stays what it was
    arm.frames[0]["R"] = Var("r")
    arm.set("B", "b")
    first = base.copy()
    kept, version = first.frames[0]["A"], first.frames[0].version
    merged = merge_states([first, arm], "an undecided test")
    frame = merged.frames[0]
    assert frame["A"] is kept and frame.version == version and merged.exported() == {"A": "x"}
    assert frame["R"].value == "r" and not frame["R"].readonly  # merged anew, as every merged name
    assert frame["B"].value.why == "an undecided test"


_BRANCHY = (
    'readonly R=r\nA=1\nB=2\nK=k\nexport E=e\n'
    'f() { local L=l; if [ "$U1" = 1 ]; then L=m; A=f; unset K; fi; run "$L" "$A"; }\n'
    'if [ "$U2" = 1 ]; then\n'
    '  C=c; f\n'
    '  if [ "$U3" = 1 ]; then D=d; B=3; else D=e; export E=e2; fi\n'
    '  for i in 1 2 3; do if [ "$U4" = "$i" ]; then F=$i; break; fi; G=$i; done\n'
    'elif [ "$U5" = 1 ]; then\n'
    '  unset A; H=h\n'
    'fi\n'
    '[ "$U6" = 1 ] && I=i || J=j\n'
    'run "$A" "$B" "$C" "$D" "$E" "$F" "$G" "$H" "$I" "$J" "$K" "$R"\n'
)


def test_a_merge_by_the_names_the_arms_changed_is_the_merge_that_compares_every_name(monkeypatch):
    from recipes.launch import state as state_module

    used = []

    def counted(frames, source):
        got = real(frames, source)
        used.append(got is not None)
        return got

    real = state_module.changed_names
    monkeypatch.setattr(state_module, "changed_names", counted)
    fast, fast_state = run(_BRANCHY)
    assert sum(used) >= 5  # the arms' changes were known at most merges, nested ones too
    monkeypatch.setattr(state_module, "changed_names", lambda frames, source: None)
    full, full_state = run(_BRANCHY)
    assert repr(fast.effects) == repr(full.effects)
    assert [dict(f) for f in fast_state.frames] == [dict(f) for f in full_state.frames]


def test_the_names_a_copy_changed_are_known_while_its_source_is_unchanged():
    from recipes.launch.frame import adopt, changed_names

    base = new_frame({"A": Var("1"), "B": Var("2")}, outermost=True)
    one, two = base.copy(), base.copy()
    one["A"] = Var("x")
    del two["B"]
    assert changed_names([one, two, base], base) == {"A", "B"}
    assert changed_names([one, new_frame({"A": Var("1")})], base) is None  # not a copy of it
    inner = one.copy()
    inner["C"] = Var("c")
    assert changed_names([inner, one], base) is None  # a copy of a copy: its source is another
    adopt(inner, one)  # the merge of `one`'s arms takes its place: what both changed, from base
    assert inner.source == base.ident and changed_names([inner, two], base) == {"A", "B", "C"}
    other = base.copy()
    base["D"] = Var("d")  # the source changed after the copy: not known
    assert changed_names([other, base], base) is None
    other.update({"E": Var("e")})
    assert other.changed is None


def test_a_value_set_in_one_arm_only_merges_as_the_general_rule_merges_it():
    from recipes.launch.state import _merge_values
    from recipes.launch.words import OneOf, OrEmpty, Unknown

    why = "set on an undecided branch"
    for a, b in [("x", None), (None, ""), (Unknown("u", "pre", "suf"), None), (None, Unknown("u"))]:
        got = _merge_values(a, b, why, "X")
        assert got == Unknown(why) and type(got) is Unknown  # no known ends: unset on the other path
    # Values with more to them keep their general merge.
    assert isinstance(_merge_values(OrEmpty("e", set_prefix="/p"), None, why, "X"), Unknown)
    assert _merge_values(OneOf("o", values=("a", "b")), None, why, "X") == Unknown(why)
    same = Unknown("u")
    assert _merge_values(same, same, why, "X") is same and _merge_values("a", "a", why, "X") == "a"
    assert isinstance(_merge_values("a", "b", why, "X"), OneOf)


def test_a_here_document_s_plain_runs_escapes_and_expansions_read_as_bash_reads_them():
    body = ('a: $A and ${B}\\n\nprice: \\$5 `echo tick` \\`x\\` back\\\\slash\n'
            'cont\\\ninued $ alone, 100%$\n')
    _, state = run(f'A=1\nB=two\nT=$(cat <<EOF\n{body}EOF\n)\n')
    assert state.get("T") == ('a: 1 and two\\n\nprice: $5 tick `x` back\\slash\ncontinued $ alone, 100%$')


def test_a_new_process_puts_its_parent_s_pads_aside_and_gives_them_back_however_it_ends():
    from recipes.launch.fs import Files
    from recipes.launch.shell import Interpreter
    from recipes.source import MemorySource

    it = Interpreter(Files(MemorySource({})), vocabulary=lambda argv, cwd=None: None)
    parent = [it.pad("loop")]
    with it.new_process():
        assert it.pads == []
        it.pad("call")
    assert it.pads == parent
    with pytest.raises(ValueError):
        with it.new_process():
            raise ValueError("a fault inside")
    assert it.pads == parent


def test_a_test_before_and_or_names_the_effects_under_it_by_its_shortened_text():
    long = '[ "$UNSET_ONE" = "a-rather-long-value" ]  &&\t[ "$UNSET_TWO" = "another-long-value" ]'
    trace, _ = run(f'{long} && run a\n[ "$U" = 1 ] || run b\n')
    first, second = trace.of(EXEC)
    assert first.under == ('`[ "$UNSET_ONE" = "a-rather-long-value" ] && [ "$UNSET_TWO...` at launch.sh:1',)
    assert second.under == ('`[ "$U" = 1 ]` at launch.sh:2',)
