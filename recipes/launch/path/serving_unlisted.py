"""Serving views for the agentic launcher scripts a PR adds before any master-config entry
runs them (issue 11: an agentic script added under the agentic benchmarks folder is a config
for Checks 9-11 even without an entry yet)."""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Any

from recipes.launch.path.serving import ServingView, _analysis, _build_view
from recipes.engines import primary_framework


@dataclass
class _Unlisted:
    point: Any
    reasons: list[str]


MEMO_UNLISTED = "serving.unlisted_agentic"
MSG_UNLISTED_REASON = "added by this PR under {folder} without a master-config entry yet"
_AGENTIC_NAME = re.compile(r"^(?P<prefix>[a-z0-9.]+?)_(?P<precision>[a-z]*(?:fp|bf|int)[0-9]+)_(?P<sku>[a-z0-9]+)"
                           r"(?:_(?P<framework>[a-z][a-z-]*?))??(?P<mtp>_mtp)?\.sh$")


def unlisted_agentic_views(ctx: Any) -> list[ServingView]:
    """Views for agentic launcher scripts this PR adds under `<scripts>/single_node/agentic/` that
    no master-config point runs yet: they are configs for Checks 9-11 all the same. The point is
    read from the file name (spec 1.2: `<prefix>_<precision>_<sku>[_<framework>][_mtp].sh`) and
    the engine from the script's server launch."""
    def build() -> list[ServingView]:
        from recipes.points import SCENARIO_AGENTIC, BenchmarkPoint, Launcher

        files = ctx.snapshot.files
        if not isinstance(files, list):
            return []
        repo = ctx.head_repo
        folder = "/".join(p for p in (repo.layout.scripts_dir, "single_node", "agentic") if p)
        launched = {p.launcher.path for p in repo.points if p.launcher is not None}
        out: list[ServingView] = []
        for f in files:
            if f.status != "added" or posixpath.dirname(f.path) != folder or f.path in launched:
                continue
            m = _AGENTIC_NAME.match(posixpath.basename(f.path))
            analysis = _analysis(ctx, f.path) if m else None
            if analysis is None:
                continue
            engine = next((l.engine for l in analysis.server_launches if l.engine), None)
            framework = m.group("framework") or (primary_framework(engine) if engine else None)
            stem = posixpath.basename(f.path)[:-3]
            point = BenchmarkPoint(
                config_key=stem, scenario=SCENARIO_AGENTIC, spec_decoding="mtp" if m.group("mtp") else "none",
                framework=framework, precision=m.group("precision"), model_prefix=m.group("prefix"),
                launcher=Launcher(kind="script", path=f.path, exists=True), source_path=f.path, source_line=1,
                point_id=f"{stem}:unlisted")
            view = _build_view(ctx, _Unlisted(point=point, reasons=[MSG_UNLISTED_REASON.format(folder=folder)]))
            out.append(view)
        return out

    return ctx.memo(MEMO_UNLISTED, build)
