"""checks.reach: the name filter that spares building launch paths that cannot hold a changed
file. It may keep too much, never too little; a name only a comment holds does not count
(real shape: benchmark_lib.sh's `# ... launch_mi355x-amds.sh derives PORT ...` made every
launcher a candidate for a change of the AMD runner's scripts, e944302e8d)."""
from __future__ import annotations

from checks.context import ReviewContext
from checks.reach import reach_names
from recipes.scripts import code_text
from tests.builders import RUNNERS, build_snapshot

LIB = "benchmarks/benchmark_lib.sh"
LAUNCHER = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x.sh"
CHANGED = "runners/launch_mi355x-amds.sh"


def _names(lib: str, targets: tuple[str, ...] = (CHANGED,)) -> set[str]:
    head = {**RUNNERS, LIB: lib, CHANGED: "#!/bin/bash\necho run\n",
            LAUNCHER: '#!/bin/bash\nsource "$(dirname "$0")/../../benchmark_lib.sh"\nrun_benchmark_serving\n'}
    ctx = ReviewContext(build_snapshot(base=head, head=head))
    return reach_names(ctx.head_repo, ctx.snapshot.head, targets)


def test_a_name_only_a_comment_holds_does_not_reach():
    lib = "#!/bin/bash\n# launch_mi355x-amds.sh derives PORT from RUNNER_NAME\nrun_benchmark_serving() { :; }\n"
    assert _names(lib) == {"launch_mi355x-amds.sh"}


def test_a_name_the_code_holds_reaches_and_so_do_the_files_naming_that_one():
    lib = '#!/bin/bash\nrun_benchmark_serving() { bash "$GITHUB_WORKSPACE/runners/launch_mi355x-amds.sh"; }\n'
    assert _names(lib) == {"launch_mi355x-amds.sh", "benchmark_lib.sh", "dsr1_fp8_mi355x.sh"}


def test_a_hash_in_a_string_a_heredoc_or_an_expansion_is_not_a_comment():
    for lib in ('#!/bin/bash\necho "# see launch_mi355x-amds.sh"\n',
                "#!/bin/bash\nbash <<EOF\n# launch_mi355x-amds.sh\nEOF\n",
                "#!/bin/bash\nn=${#x}; bash launch_mi355x-amds.sh\n"):
        assert "benchmark_lib.sh" in _names(lib), lib


def test_a_text_that_does_not_parse_counts_whole():
    lib = "#!/bin/bash\n# launch_mi355x-amds.sh\nif then fi (\n"
    assert code_text(lib) is None
    assert "benchmark_lib.sh" in _names(lib)


def test_code_text_blanks_comments_only_and_keeps_line_numbers():
    text = "#!/bin/bash\necho a # b.sh\nx='# c.sh'\n"
    code = code_text(text)
    assert code is not None and code.count("\n") == text.count("\n")
    assert "b.sh" not in code and "'# c.sh'" in code and "echo a" in code
