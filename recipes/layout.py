"""Which of the three repository spellings a tree uses, and where each file kind lives."""
from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict

from .config import Paths
from .model import Model
from .source import FileSource

LayoutName = Literal["root", "inferencex-e2e"]
NEW_ROOT = "inferencex-e2e"


class Layout(Model):
    """Resolved paths (all repository-relative, no leading slash)."""

    model_config = ConfigDict(frozen=True)

    name: LayoutName
    root: str  # "" or "inferencex-e2e"; srt-recipe paths in master configs are relative to it
    configs_dir: str
    changelog: str
    golden_dir: str
    models_md: str
    checklist: str
    waiver_dir: str
    thresholds: str
    scripts_dir: str
    codeowners: str

    def rel(self, path: str) -> str:
        """A path written relative to the layout root, as a repository path."""
        path = path.lstrip("/")
        return f"{self.root}/{path}" if self.root else path

    def master_configs(self, src: FileSource) -> list[str]:
        return [p for p in src.list(self.configs_dir) if p.endswith("-master.yaml") and p.count("/") == self.configs_dir.count("/") + 1]


def detect_layout(src: FileSource, paths: Paths | None = None) -> Layout:
    """New layout if `inferencex-e2e/` holds configs or a changelog; else the root layout,
    with master configs under `configs/` or, in the oldest spelling, `.github/configs/`."""
    paths = paths or Paths()
    if paths.root is not None:
        root = paths.root.strip("/")
    elif src.list(f"{NEW_ROOT}/configs") or src.read(f"{NEW_ROOT}/perf-changelog.yaml") is not None:
        root = NEW_ROOT
    else:
        root = ""

    def j(*parts: str) -> str:
        return "/".join(p for p in parts if p)

    if root:
        d = dict(
            name="inferencex-e2e",
            configs_dir=j(root, "configs"),
            changelog=j(root, "perf-changelog.yaml"),
            golden_dir=j(root, "infx/golden_al_distribution"),
            models_md=j(root, "docs/MODELS.md"),
            checklist=j(root, "docs/PR_REVIEW_CHECKLIST.md"),
            waiver_dir=j(root, "docs/waiver"),
            thresholds=j(root, "infx/evals/thresholds.yaml"),
            scripts_dir=j(root, "benchmarks"),
        )
    else:
        configs_dir = "configs"
        if not [p for p in src.list("configs") if p.endswith("-master.yaml")] and [
            p for p in src.list(".github/configs") if p.endswith("-master.yaml")
        ]:
            configs_dir = ".github/configs"
        models_md = "MODELS.md" if src.read("MODELS.md") is not None else "docs/MODELS.md"
        d = dict(
            name="root",
            configs_dir=configs_dir,
            changelog="perf-changelog.yaml",
            golden_dir="golden_al_distribution",
            models_md=models_md,
            checklist="docs/PR_REVIEW_CHECKLIST.md",
            waiver_dir="docs/waiver",
            thresholds="utils/evals/thresholds.yaml",
            scripts_dir="benchmarks",
        )
    for field in ("configs_dir", "changelog", "golden_dir", "models_md", "checklist", "waiver_dir", "thresholds", "scripts_dir"):
        override = getattr(paths, field)
        if override:
            d[field] = override.strip("/")
    return Layout(root=root, codeowners=paths.codeowners, **d)


def is_benchmark_repository(src: FileSource, layout: Layout) -> bool:
    """Whether a tree is an InferenceX-style benchmark repository: it holds a master config
    (`<configs>/*-master.yaml`) or a perf changelog where its layout puts them."""
    return bool(layout.master_configs(src)) or src.read(layout.changelog) is not None


def benchmark_markers(layout: Layout) -> str:
    """Where `is_benchmark_repository` looked, for a message saying a tree is not one."""
    return f"{layout.configs_dir}/*-master.yaml or {layout.changelog}"
