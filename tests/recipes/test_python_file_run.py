"""recipes.scripts.python_file_run / analyze_python_file: a Python file a launch-path script runs."""
from __future__ import annotations

from recipes.scripts import UNREADABLE_CODES, analyze_python_file, python_file_run
from recipes.scripts import _PY_FILE_MARK


def test_the_file_a_python_interpreter_runs():
    assert python_file_run(["python3", "fix.py"]) == "fix.py"
    assert python_file_run(["/usr/bin/python3.12", "-u", "-X", "dev", "/w/fix.py", "--a"]) == "/w/fix.py"
    for argv in (["python3", "-m", "aiperf"], ["python3", "-c", "print(1)"], ["python3", "-"], ["bash", "x.py"], []):
        assert python_file_run(argv) is None, argv


def test_a_write_into_the_serving_stack_is_a_patch_and_a_plain_script_is_not():
    bad = analyze_python_file("open('/usr/local/lib/python3.12/site-packages/vllm/x.py', 'w').write('')\n", "fix.py")
    assert [(p.kind, p.target) for p in bad.patches] == [("heredoc-write", "/usr/local/lib/python3.12/site-packages/vllm/x.py")]
    assert analyze_python_file("print('hello')\n", "show.py").patches == []


def test_a_file_holding_the_heredoc_marker_is_unreadable_never_clean():
    code = f"print(1)\n{_PY_FILE_MARK}\nif x: (\n"
    analysis = analyze_python_file(code, "sly.py")
    assert analysis.patches or any(f.code in UNREADABLE_CODES for f in analysis.findings), analysis.findings


def test_the_write_line_is_the_first_line_of_any_write_call_however_deep():
    from recipes.launch.pycode import write_line

    code = ("import os\n"
            "def save(p):\n"
            "    with open(p) as f:\n"
            "        return [Path(q).open('w') for q in f]\n"
            "os.replace('a', 'b')\n"
            "print(open('x', 'a'))\n")
    assert write_line(code) == 4  # the comprehension's call, inside a def, before the later ones
    assert write_line("import os\nprint(open('x').read(), os.path.join('a', 'b'))\n") is None
    assert write_line("def f(:\n    open('/x', 'w')\n") == 1  # not Python: the text's fallback
