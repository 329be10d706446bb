"""Look at a verdict comment as a maintainer sees it on GitHub: GitHub's Markdown parser (cmark-gfm,
through cmarkgfm) and Mermaid in headless Chromium, to one PNG per page theme (light and dark).

    python bench/render_verdict.py [VERDICT.md ...] [--out DIR] [--charts-only]

Without a file it renders tests/golden/world_seed_warn.md (the seed world's verdict, with Check
14's chart). `<details>` blocks are opened, as a reader clicking them would. Mermaid is the npm
package `mermaid` (installed with `npm install --prefix DIR mermaid`; never committed): give its
folder with --mermaid or $INFX_MERMAID, else --install-mermaid installs it under --out. Chromium is
`chromium` (Debian: `apt-get install chromium`, and fonts-noto-color-emoji for the verdict's
emoji) or --chromium. When either is missing the script says which and exits 3 without
rendering: nothing in the test suite needs them.

Each page is rendered from a local file with networking off; Mermaid is given GitHub's theme for
the page (`default` on light, `dark` on dark), so a chart's own `%%{init}%%` directive decides
what it looks like, as on GitHub.
"""
from __future__ import annotations

import argparse
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
DEFAULT_INPUT = PROJECT / "tests" / "golden" / "world_seed_warn.md"
DEFAULT_OUT = Path(tempfile.gettempdir()) / "infx-render"
MERMAID_ENV = "INFX_MERMAID"
MERMAID_JS = Path("dist") / "mermaid.min.js"
EXIT_MISSING = 3
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                  "--virtual-time-budget=15000")
# GitHub's page colours (Primer) and the Mermaid theme GitHub gives each.
THEMES = {
    "light": {"bg": "#ffffff", "fg": "#1f2328", "muted": "#59636e", "border": "#d1d9e0", "mermaid": "default"},
    "dark": {"bg": "#0d1117", "fg": "#f0f6fc", "muted": "#9198a1", "border": "#3d444d", "mermaid": "dark"},
}
WIDTH = 1012  # the width of a PR conversation's comment column
MERMAID_PRE = re.compile(r'<pre lang="mermaid"><code>(.*?)</code></pre>', re.S)
CHART_FENCE = re.compile(r"```mermaid\n.*?```\n", re.S)

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>
body {{ background: {bg}; color: {fg}; margin: 0; padding: 16px 24px; width: {width}px;
  font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }}
a {{ color: {link}; }}
code {{ background: {border}66; padding: .2em .4em; border-radius: 6px; font-size: 85%; }}
details {{ margin: 8px 0; }} summary {{ color: {muted}; cursor: pointer; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid {border}; padding: 6px 13px; }}
pre.mermaid {{ background: transparent; border: 1px solid {border}; border-radius: 6px; padding: 8px; }}
</style><script src="{mermaid_js}"></script></head>
<body>{body}
<script>
mermaid.initialize({{ startOnLoad: false, theme: "{theme}", securityLevel: "strict" }});
mermaid.run({{ querySelector: "pre.mermaid" }}).then(
  () => document.body.setAttribute("data-rendered", "ok"),
  (e) => {{ document.body.setAttribute("data-rendered", "error"); document.body.insertAdjacentText("afterbegin", "MERMAID ERROR: " + ((e && (e.message || e.str)) || e)); }});
</script></body></html>
"""


def markdown_to_html(text: str) -> str:
    """The comment as GitHub's parser renders it (`<pre lang=...>`, raw HTML such as <details> kept),
    each Mermaid block made a node Mermaid renders and every <details> opened."""
    import cmarkgfm
    from cmarkgfm.cmark import Options

    out = cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_GITHUB_PRE_LANG | Options.CMARK_OPT_UNSAFE)
    # The code stays HTML-escaped: Mermaid reads the node's text, which the browser unescapes.
    out = MERMAID_PRE.sub(lambda m: f'<pre class="mermaid">{m.group(1)}</pre>', out)
    return out.replace("<details>", "<details open>")


def charts_only(text: str) -> str:
    return "\n".join(CHART_FENCE.findall(text)) or text


def find_mermaid(given: Path | None, out: Path, install: bool) -> Path | None:
    for folder in (given, Path(os.environ[MERMAID_ENV]) if os.environ.get(MERMAID_ENV) else None,
                   out / "node_modules" / "mermaid"):
        if folder is not None and (folder / MERMAID_JS).is_file():
            return folder / MERMAID_JS
    if install and shutil.which("npm"):
        proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", str(out), "mermaid"],
                              capture_output=True, text=True)
        if proc.returncode == 0 and (out / "node_modules" / "mermaid" / MERMAID_JS).is_file():
            return out / "node_modules" / "mermaid" / MERMAID_JS
        print(proc.stderr.strip()[-500:], file=sys.stderr)
    return None


def find_chromium(given: str | None) -> str | None:
    if given:
        return given if shutil.which(given) else None
    return next((shutil.which(n) for n in CHROMIUM_NAMES if shutil.which(n)), None)


def screenshot(chromium: str, page: Path, png: Path, height: int) -> None:
    with tempfile.TemporaryDirectory(prefix="infx-chromium-") as profile:
        cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={WIDTH + 48},{height}",
               f"--screenshot={png}", page.as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    if proc.returncode != 0 or not png.is_file():
        raise SystemExit(f"chromium failed ({proc.returncode}) on {page}: {proc.stderr.strip()[-500:]}")


def rendered_state(chromium: str, page: Path) -> str:
    """`ok` when Mermaid rendered every chart of the page, else what it said."""
    with tempfile.TemporaryDirectory(prefix="infx-chromium-") as profile:
        proc = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                              capture_output=True, text=True, timeout=180)
    m = re.search(r'<body[^>]*data-rendered="(\w+)"', proc.stdout)
    if m is None:
        return "not rendered (Mermaid did not finish)"
    if m.group(1) != "ok":
        err = re.search(r"MERMAID ERROR: ([^<]*)", proc.stdout)
        return html.unescape(err.group(1)) if err else m.group(1)
    return "ok"


def render(files: list[Path], out: Path, mermaid_js: Path, chromium: str, *, only_charts: bool,
           themes: list[str], height: int) -> list[tuple[Path, str]]:
    done = []
    for src in files:
        text = src.read_text(encoding="utf-8")
        body = markdown_to_html(charts_only(text) if only_charts else text)
        for theme in themes:
            colours = THEMES[theme]
            page = out / f"{src.stem}-{theme}.html"
            page.write_text(PAGE.format(body=body, width=WIDTH, mermaid_js=mermaid_js.as_uri(), theme=colours["mermaid"],
                                        link="#4493f8" if theme == "dark" else "#0969da", **colours), encoding="utf-8")
            png = page.with_suffix(".png")
            screenshot(chromium, page, png, height)
            done.append((png, rendered_state(chromium, page)))
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path, help=f"verdict Markdown files (default: {DEFAULT_INPUT.relative_to(PROJECT)})")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where the pages and PNGs go (default {DEFAULT_OUT})")
    ap.add_argument("--mermaid", type=Path, help=f"the mermaid npm package's folder (default ${MERMAID_ENV})")
    ap.add_argument("--install-mermaid", action="store_true", help="npm install mermaid under --out when missing")
    ap.add_argument("--chromium", help="the Chromium binary (default: chromium on PATH)")
    ap.add_argument("--charts-only", action="store_true", help="render only the comment's Mermaid blocks")
    ap.add_argument("--themes", default="light,dark", help="page themes: light, dark or both (default)")
    ap.add_argument("--height", type=int, default=1600, help="window height in pixels (default 1600)")
    args = ap.parse_args(argv)
    themes = [t for t in args.themes.split(",") if t]
    if not themes or any(t not in THEMES for t in themes):
        ap.error(f"--themes takes {', '.join(THEMES)}")
    files = args.files or [DEFAULT_INPUT]
    for f in files:
        if not f.is_file():
            ap.error(f"{f}: no such file")
    args.out.mkdir(parents=True, exist_ok=True)
    missing = []
    try:
        import cmarkgfm  # noqa: F401
    except ImportError:
        missing.append("cmarkgfm (pip install cmarkgfm; the test extra has it)")
    mermaid_js = find_mermaid(args.mermaid, args.out, args.install_mermaid)
    if mermaid_js is None:
        missing.append(f"mermaid (npm install --prefix {args.out} mermaid, then run again; or --install-mermaid, "
                       f"--mermaid DIR, ${MERMAID_ENV})")
    chromium = find_chromium(args.chromium)
    if chromium is None:
        missing.append("chromium (apt-get install chromium; or --chromium PATH)")
    if missing:
        print("cannot render, missing: " + "; ".join(missing), file=sys.stderr)
        return EXIT_MISSING
    assert mermaid_js is not None and chromium is not None
    failed = 0
    for png, state in render(files, args.out, mermaid_js, chromium, only_charts=args.charts_only, themes=themes,
                             height=args.height):
        print(f"{png}  mermaid: {state}")
        failed += state != "ok"
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
