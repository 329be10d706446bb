"""bench/render_verdict.py: the Markdown half runs here (cmarkgfm is a test dependency); the browser
half needs Chromium and the mermaid npm package, which the suite never needs: without them the
script says which is missing and exits 3."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
SCRIPT = PROJECT / "bench" / "render_verdict.py"
GOLDEN = PROJECT / "tests" / "golden" / "world_seed_warn.md"


def _module():
    spec = importlib.util.spec_from_file_location("bench_render_verdict", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_mermaid_blocks_become_nodes_mermaid_renders_and_details_open():
    render = _module()
    page = render.markdown_to_html(GOLDEN.read_text(encoding="utf-8"))
    assert page.count('<pre class="mermaid">') == 1 and "quadrantChart" in page
    assert "<details open>" in page and "<details>" not in page
    # The chart's text stays escaped in HTML; the browser hands Mermaid the plain text.
    assert "--&gt;" in page and '<pre lang="mermaid">' not in page
    only = render.charts_only(GOLDEN.read_text(encoding="utf-8"))
    assert only.startswith("```mermaid\n") and "Check 14" not in only


def test_missing_tools_are_named_and_nothing_is_rendered(tmp_path):
    env = {"PATH": "/nonexistent", "HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "out"), "--chromium", "no-such-chromium",
                           "--mermaid", str(tmp_path / "none")], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 3, proc.stderr
    assert "missing: " in proc.stderr and "mermaid (npm install" in proc.stderr and "chromium" in proc.stderr
    assert not list((tmp_path / "out").glob("*.png"))
