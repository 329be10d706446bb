"""Check 2 (Evals): the chosen sweep run's evals exist, are valid, meet the bar, on the config's image.

What it checks:
    Reads the run Check 1 chose (checks.sweep_runs.sweep_choice). Its eval
    rows (the `eval_results_all` artifact, spec 9.2) must exist and be valid (primary score
    finite and in [0, 1], no infrastructure or integration error; recipes.artifacts
    .parse_eval_rows). Each row's primary score (`score`, else `em_strict`, `accuracy`,
    `em_flexible`) must reach the bar from `thresholds.yaml` on the TARGET branch (a PR cannot
    lower its own bar; a PR whose head lowers or removes a bar against its MERGE BASE FAILs with
    the change cited, so a bar raised on the target branch after the PR branched is not read as
    the PR lowering it; a thresholds file new in the PR is used only where it is not below the
    fallback): `models.<prefix>
    .<task>`, else `default.<task>`, else policy `eval_default_min_score` (0.85, the collector's
    CLI default). Rows are tied to the affected master-config entries by model prefix,
    framework, precision and GPU; every added or changed entry needs at least one row. The
    image the eval ran on comes from the run's `meta_env.json` contents (SweepRun.meta: the
    aggregate `eval_results_all` one or per-job `eval_*` ones), read from any key in policy
    `eval_image_keys` (`image`, `IMAGE`, `container_image`; the upstream field name is
    unconfirmed). A per-job file naming a model prefix, framework or precision applies only to
    matching entries. The image must equal the entry's `image` at head after normalisation
    (recipes.master.images_match: `#` read as `/`, Docker Hub prefixes dropped, every tag and
    digest both sides pin equal).
Why it matters:
    Throughput from a config that produces wrong answers is worthless; an eval on a different
    image says nothing about the image that will be benchmarked.
Evidence it cites:
    The run id and artifact, each row's task, score, standard error, n, TP and concurrency,
    the thresholds line, and the image source.
Not applicable when:
    Never: without a passing run (Check 1) or eval rows the row FAILs.
How to fix:
    Re-run the sweep with evals on the PR's config and image (or fix the accuracy regression),
    then re-anchor with `/use <run_id>`.
"""
from __future__ import annotations

from typing import TypedDict

from checks.sweep_runs import sweep_choice
from checks.result import CheckResult, Evidence
from checks.snapshot import Unavailable
from recipes.artifacts import EvalRow, base_gpu, parse_eval_rows
from recipes.master import images_match, normalize_image
from recipes.thresholds import Thresholds
from checks.text import join
from checks.two_readings import two_readings_result

LIST_MAX = 3
META_MATCH_KEYS = (("model_prefix", "model_prefix"), ("framework", "framework"), ("precision", "precision"))

MSG_FIX = "re-run the sweep with evals on the PR's config, then re-anchor with `/use <run_id>`"
MSG_NO_RUN = "No sweep run to read evals from (Check 1 found no passing sweep/eval on an in-PR commit); " + MSG_FIX + "."
MSG_NO_RUN_UNAVAILABLE = ("could not verify: no sweep run to read evals from, as Check 1 could not read {what}; "
                          + MSG_FIX + ".")
MSG_NO_ROWS = "Run {run} has no {artifact} eval rows; " + MSG_FIX + "."
MSG_EMPTY = "Run {run}'s {artifact} holds no eval rows; " + MSG_FIX + "."
MSG_UNAVAILABLE = "could not verify: the eval rows of run {run} could not be read ({reason}); " + MSG_FIX + "."
MSG_NO_THRESHOLDS = "could not verify: {path} was not found on the target branch or at the PR head, so the pass bars are unknown; restore it."
MSG_LOWERED = ("The PR lowers the eval pass bars the bot checks against (read from the target branch): {changes}; "
               "thresholds change only in their own reviewed PR.")
MSG_LOWER_ITEM = "{source} {old:.2f} -> {new:.2f}{via}"
MSG_BAD_HEAD_THRESHOLDS = ("could not verify the pass bars the PR changes: {finding}; fix the thresholds file "
                           "(the bars are read from the target branch, and the PR's file must not lower them).")
MSG_NEW_THRESHOLDS = " The thresholds file is new in this PR; its bars were used."
MSG_BAD_THRESHOLDS = "could not verify the pass bars: {finding}; fix the thresholds file."
MSG_INVALID = "Invalid eval rows in run {run} {artifact}: {which}; " + MSG_FIX + "."
MSG_BELOW = "Eval below the bar in run {run} {artifact}: {which}; fix the accuracy regression and " + MSG_FIX + "."
MSG_NO_ENTRY_ROWS = "Run {run} {artifact} has no eval row for the affected {keys}; " + MSG_FIX + "."
MSG_NO_IMAGE = (
    "could not verify the eval image: run {run} has no meta_env.json image ({keys}) for {key}; "
    "make the eval job record its image and " + MSG_FIX + "."
)
MSG_IMAGE_MISMATCH = (
    "The eval in run {run} ran on image {ran} ({source}), but {key} pins {pinned} at the head; " + MSG_FIX + "."
)
MSG_PASS = "{artifact}: {rows}, {image_text}."
MSG_CONTAINER_MISMATCH = (
    "{path}:{line} launches model.container {container}, but {key} pins image {image}: the harness "
    "refuses such a point (spec 2.3) and the eval did not run the recipe's container; make the two agree."
)
MSG_IMAGE_SAME = "image {image}, the same image as the config"
MSG_IMAGE_SAME_MANY = "the same images as the configs ({keys})"
MSG_ROW = "{task} {name} {score:.3f}{se} vs bar {bar:.2f} ({bar_source}), TP{tp} c{conc}"
MSG_ROW_BELOW = "{prefix} {task} {name} {score:.3f} < {bar:.2f} ({bar_source}) at TP{tp} c{conc}"


def lowered_bars(base, head, fallback: float) -> list[tuple[str, Evidence]]:
    """Every (model, task) whose bar at the head is below the one in `base` (the PR's merge
    base; a missing file bars everything at `fallback`), with the head line; empty when the head
    lowers nothing."""
    if head is None:
        return []
    prefixes = {""} | set(head.models) | (set(base.models) if base is not None else set())
    tasks = set(head.default) | {t for bars in head.models.values() for t in bars}
    if base is not None:
        tasks |= set(base.default) | {t for bars in base.models.values() for t in bars}
    out: dict[str, tuple[str, Evidence]] = {}
    for prefix in sorted(prefixes):
        for task in sorted(tasks):
            old, old_source = base.bar(prefix, task, fallback) if base is not None else (fallback, "fallback")
            new, source = head.bar(prefix, task, fallback)
            if new < old - 1e-12 and (old_source, source) not in out:
                text = MSG_LOWER_ITEM.format(source=old_source, old=old, new=new,
                                             via="" if source == old_source else f" ({source})")
                out[(old_source, source)] = (text, Evidence(path=head.path, line=head.line_of(source), note=text))
    return list(out.values())


def _row_text(r: EvalRow, bar: float, source: str) -> str:
    se = ""
    if r.score_se is not None:
        se = f" (±{r.score_se:.3f}" + (f", n={r.n_eff})" if r.n_eff is not None else ")")
    return MSG_ROW.format(task=r.task, name=r.score_name, score=r.score, se=se, bar=bar, bar_source=source,
                          tp=r.tp if r.tp is not None else "?", conc=r.conc if r.conc is not None else "?")


class EvalScore(TypedDict):
    """`details["scores"]` of a pass: each eval row judged, with its bar and where the bar is set."""

    model_prefix: str | None
    task: str
    metric: str | None
    score: float
    bar: float
    bar_source: str
    tp: int | None
    conc: int | None


def _join(items: list[str]) -> str:
    return join(items, None, sep="; ", limit=LIST_MAX, more_sep=" ")


def _norm(value) -> str:
    return str(value or "").strip().lower()


def _row_matches(row: EvalRow, entry) -> bool:
    if _norm(row.model_prefix) != _norm(entry.model_prefix):
        return False
    if row.framework and _norm(row.framework) != _norm(entry.framework):
        return False
    if row.precision and _norm(row.precision) != _norm(entry.precision):
        return False
    if row.hw and entry.runner and base_gpu(row.hw) != base_gpu(entry.runner):
        return False
    return True


def _meta_applies(meta: dict, entry) -> bool:
    for meta_key, attr in META_MATCH_KEYS:
        value = meta.get(meta_key)
        if value and _norm(value) != _norm(getattr(entry, attr.replace("-", "_"), None)):
            return False
    return True


def _meta_image(meta: dict, keys: list[str]) -> str | None:
    for k in keys:
        v = meta.get(k)
        if isinstance(v, str) and v.strip():
            return v.strip()
    return None


class EvalsCheck:
    def applies(self, ctx) -> str | None:
        return None

    def evaluate(self, ctx) -> CheckResult:
        choice = sweep_choice(ctx)
        run = choice.run
        if run is None:
            if choice.unavailable:
                # Say which evidence was missing, so a GitHub outage never reads as "no evals".
                return CheckResult.failed(MSG_NO_RUN_UNAVAILABLE.format(what=choice.unavailable[0]),
                                          *(Evidence(note=u, unavailable=True) for u in choice.unavailable))
            return CheckResult.failed(MSG_NO_RUN)
        artifact = ctx.config.sweep.eval_artifact
        run_ev = Evidence(run_id=run.run_id, artifact=artifact, url=run.html_url or None)
        if isinstance(run.evals, Unavailable):
            return CheckResult.failed(MSG_UNAVAILABLE.format(run=run.run_id, reason=run.evals.reason),
                                      Evidence(run_id=run.run_id, artifact=artifact, unavailable=True))
        if run.evals is None:
            return CheckResult.failed(MSG_NO_ROWS.format(run=run.run_id, artifact=artifact), run_ev)
        rows = parse_eval_rows(run.evals, source=f"run {run.run_id} {artifact}")
        if not rows:
            return CheckResult.failed(MSG_EMPTY.format(run=run.run_id, artifact=artifact), run_ev)

        invalid = [r for r in rows if not r.valid]
        if invalid:
            which = [f"row {r.index} ({r.model_prefix or '?'} {r.task or '?'}): {r.problem}" for r in invalid]
            return CheckResult.failed(MSG_INVALID.format(run=run.run_id, artifact=artifact, which=_join(which)),
                                      run_ev)

        head = ctx.head_repo
        fallback = ctx.config.policy.eval_default_min_score
        thresholds, head_th = ctx.target_repo.thresholds, head.thresholds
        th_path = ctx.target_repo.layout.thresholds
        new_file = thresholds is None and head_th is not None
        if new_file:
            thresholds = head_th
        if thresholds is None:
            return CheckResult.failed(MSG_NO_THRESHOLDS.format(path=th_path),
                                      Evidence(path=th_path, unavailable=True), run_ev)
        bad = next((f for f in thresholds.findings if f.severity == "error"), None)
        if bad is not None:
            return CheckResult.failed(MSG_BAD_THRESHOLDS.format(finding=str(bad)), Evidence(path=bad.path, line=bad.line))
        if head_th is not None and head_th is not thresholds:
            head_bad = next((f for f in head_th.findings if f.severity == "error"), None)
            if head_bad is not None:
                return CheckResult.failed(MSG_BAD_HEAD_THRESHOLDS.format(finding=str(head_bad)),
                                          Evidence(path=head_bad.path, line=head_bad.line))
        # What the PR changes is its head against its merge base (checks.snapshot).
        base_th = ctx.base_repo.thresholds
        if head_th is None and base_th is not None:  # deleted by the PR: every bar is the fallback
            head_th = Thresholds(path=head.layout.thresholds)
        lowered = lowered_bars(base_th, head_th, fallback)
        if lowered:
            return CheckResult.failed(MSG_LOWERED.format(changes=_join([t for t, _ in lowered])),
                                      *(e for _, e in lowered))

        ambiguous = two_readings_result(ctx, masters_only=True)
        if ambiguous is not None:  # which entry's image and rows are the PR's is not one thing
            return ambiguous

        # Which rows speak for this PR: those of the affected entries (all rows when none map).
        entries = head.entries
        keys = [k for k in ctx.affected.changed_keys if k in entries] or \
            [k for k in ctx.affected.config_keys if k in entries] or \
            [k for k in entries if any(_row_matches(r, entries[k]) for r in rows)]
        considered = [r for r in rows if any(_row_matches(r, entries[k]) for k in keys)]
        required = [k for k in ctx.affected.changed_keys if k in entries]
        without = [k for k in required if not any(_row_matches(r, entries[k]) for r in rows)]
        if without or not considered:
            names = without or keys or ["master-config entries (no head entry matches any row)"]
            return CheckResult.failed(
                MSG_NO_ENTRY_ROWS.format(run=run.run_id, artifact=artifact, keys=join(names, None)),
                run_ev, *(Evidence(path=entries[k].path, line=entries[k].line, note=k) for k in names if k in entries),
            )

        below, passed, bar_ev = [], [], {}
        scores: list[EvalScore] = []
        for r in considered:
            bar, source = thresholds.bar(r.model_prefix or "", r.task, fallback)
            scores.append(EvalScore(model_prefix=r.model_prefix, task=r.task, metric=r.score_name, score=r.score,
                                    bar=bar, bar_source=source, tp=r.tp, conc=r.conc))
            line = thresholds.line_of(source)
            bar_ev[source] = Evidence(path=thresholds.path, line=line, note=f"{source} = {bar}")
            if r.score < bar:
                below.append(MSG_ROW_BELOW.format(prefix=r.model_prefix or "?", task=r.task, name=r.score_name,
                                                  score=r.score, bar=bar, bar_source=source,
                                                  tp=r.tp if r.tp is not None else "?",
                                                  conc=r.conc if r.conc is not None else "?"))
            else:
                passed.append(_row_text(r, bar, source))
        if below:
            return CheckResult.failed(MSG_BELOW.format(run=run.run_id, artifact=artifact, which=_join(below)),
                                      run_ev, *bar_ev.values())

        # The image: every applicable meta_env.json must name the entry's image at head.
        image_keys = ctx.config.sweep.eval_image_keys
        metas = [(name, meta) for name, meta in sorted(run.meta.items()) if isinstance(meta, dict)]
        images_ok: dict[str, str] = {}
        image_ev = []
        for key in keys:
            entry = entries[key]
            if not any(_row_matches(r, entry) for r in considered):
                continue
            found = [(name, _meta_image(m, image_keys)) for name, m in metas if _meta_applies(m, entry)]
            found = [(n, img) for n, img in found if img]
            if not found:
                return CheckResult.failed(
                    MSG_NO_IMAGE.format(run=run.run_id, keys="/".join(image_keys), key=key),
                    run_ev, Evidence(run_id=run.run_id, note="meta_env.json image", unavailable=True),
                )
            for name, img in found:
                if not entry.image or not images_match(img, entry.image):
                    return CheckResult.failed(
                        MSG_IMAGE_MISMATCH.format(run=run.run_id, ran=img, source=f"{name}/meta_env.json",
                                                  key=key, pinned=entry.image or "no image"),
                        Evidence(run_id=run.run_id, artifact=name, note=f"image {img}"),
                        Evidence(path=entry.path, line=entry.line_of("image"), note=f"{key} image"),
                    )
                image_ev.append(Evidence(run_id=run.run_id, artifact=name, note=f"image {img}"))
            images_ok[key] = normalize_image(entry.image).canonical

        # The recipe must launch the image the eval ran on: srtctl refuses a variant whose
        # `model.container` is not the entry's image (spec 2.3), so such a config is not the one
        # that was evaluated.
        for ap in ctx.affected.points:
            point = ap.point
            if point.config_key not in images_ok:
                continue
            variant = ctx.head_repo.variant_for(point)
            container = getattr(variant, "container", None) if variant is not None else None
            if container and not images_match(container, entries[point.config_key].image or ""):
                line = variant.line_of("model", "container") if hasattr(variant, "line_of") else None
                return CheckResult.failed(
                    MSG_CONTAINER_MISMATCH.format(path=variant.path, line=line or "?", container=container,
                                                  key=point.config_key, image=entries[point.config_key].image),
                    Evidence(path=variant.path, line=line, note=f"model.container {container}"),
                    Evidence(path=entries[point.config_key].path, line=entries[point.config_key].line_of("image"),
                             note=f"{point.config_key} image"),
                )

        if len(set(images_ok.values())) == 1:
            image_text = MSG_IMAGE_SAME.format(image=next(iter(images_ok.values())))
        elif images_ok:
            image_text = MSG_IMAGE_SAME_MANY.format(keys=join(images_ok, None))
        else:  # unreachable: `considered` is non-empty, so some key was compared
            image_text = MSG_IMAGE_SAME_MANY.format(keys="none")
        reason = MSG_PASS.format(artifact=artifact, rows=_join(passed), image_text=image_text)
        if new_file:
            reason += MSG_NEW_THRESHOLDS
        return CheckResult.passed(reason, run_ev, *bar_ev.values(), *image_ev,
                                  run_id=run.run_id, artifact=artifact, scores=scores, images=dict(images_ok))
