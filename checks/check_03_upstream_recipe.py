"""Check 3 (Upstream recipe): vLLM/SGLang serving configs are documented by a merged upstream recipe.

What it checks:
    The check covers benchmark points served by vLLM or SGLang (policy `framework_family`,
    which includes dynamo-*, *-disagg) whose master-config entry was added or changed, or whose
    recipe/launcher changed. For each family, the Additional detail section of the sign-off
    must link an upstream source of that family (policy `upstream_recipe_family_sources`,
    restricted to `upstream_recipe_repos` / `upstream_recipe_sites`): a vllm-project/recipes or
    sgl-project/sglang pull request, or a published recipes.vllm.ai / docs.sglang.io cookbook
    page. Other links are ignored. A linked PR must be merged (snapshot.upstream_ref(...).merged)
    for reviews on or after the MERGED sub-rule (2026-07-14, checks.policy); before it, an open
    upstream PR whose text documents the config counts;
    a link the snapshot could not resolve is "could not verify". The production-useful
    arguments of each config's effective serving config (ctx.head_repo.effective) must appear
    in the text of at least one accepted source (the page, or the PR's recipe files): the model
    id, the SKU, TP/EP/DP/PP above 1, and every engine flag or environment variable matching
    policy `upstream_recipe_args` / `upstream_recipe_env` (quantization, KV dtype, dp-attention,
    kernel backends, ...), each as flag and value (`--kv-cache-dtype fp8`,
    `kv-cache-dtype: fp8`, `SGLANG_USE_AITER=1`; `-`/`_` and spellings such as `--tp`/`--tp-size`
    are equivalent). Harness knobs (policy `upstream_recipe_harness_knobs`: chunked prefill
    size, recv interval, concurrency, ports, ...) are never compared. Only links in the
    Additional detail section count; the PR body is not read.
Why it matters:
    The benchmark should measure a configuration users can reproduce from the engine's own
    documentation, not a private tuning.
Evidence it cites:
    Each upstream link (with its merge state), and the recipe line of each argument that the
    upstream text does not match.
Not applicable when:
    No affected point is served by vLLM or SGLang (vendor engines such as ATOM or TRT-LLM only,
    as in the seed verdict), or no benchmark serving config is affected at all.
How to fix:
    Get the serving config merged into vllm-project/recipes or the SGLang cookbook (or published
    on recipes.vllm.ai / docs.sglang.io), link it in the Additional detail section, and keep the
    benchmark's model, parallelism, quantization, KV dtype and kernel backends identical to it.
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass

from checks.policy import in_force
from checks.result import CheckResult, Evidence
from checks.snapshot import Unavailable, UpstreamRef
from recipes.launch.path.serving import engine_name
from recipes.effective import DP_FLAGS, EP_FLAGS, PP_FLAGS, TP_FLAGS, EffectiveConfig, Origin
from recipes.master import MasterEntry
from recipes.markdown import github_pull, links
from recipes.points import sku_of
from checks.text import join, plural
from recipes import values
from recipes.values import as_int, flag_name

MSG_NONE_AFFECTED = "No benchmark serving configuration is affected."
MSG_VENDOR_ONLY = (
    "The PR affects only framework: {frameworks}. No {engines} production serving configuration "
    "is added or changed."
)
MSG_NO_LINK = (
    "no {family} upstream recipe is linked for {keys}; link a merged {sources} PR or a published "
    "{sites} page in the Additional detail section."
)
MSG_UNMERGED = (
    "{ref} is {state} and not merged, so it does not document {keys}; link a merged {family} "
    "recipe PR or a published page."
)
MSG_UNRESOLVED = "could not verify {ref}: {why}; re-run once the upstream link can be read."
MSG_MISMATCH = (
    "{key}: {args} {verb} not match {ref}; make the benchmark's serving config match the upstream "
    "recipe or update the recipe upstream."
)
MSG_MATCH = "{ref} ({state}) matches {keys}."
MSG_NOT_FETCHED = "the snapshot holds no data for it"
MSG_NO_TEXT = "its recipe text was not fetched"
MSG_MERGE_UNKNOWN = "its merge state is unknown"
STATE_MERGED = "merged"
MERGED_RULE = "upstream-recipe-merged"
STATE_PAGE = "published page"
MSG_FILES_UNAVAILABLE = (
    "could not verify: the changed-file list is unavailable ({reason}), so changed {engines} recipes are unknown."
)

# Engines speak of the same parallelism with several flag spellings (spec 3.4).
PARALLEL = (("TP", TP_FLAGS + ("tp-size",)), ("EP", EP_FLAGS), ("DP", DP_FLAGS), ("PP", PP_FLAGS))
HF_PREFIX = "hf:"


@dataclass(frozen=True)
class Link:
    url: str
    family: str
    repo: str | None = None  # owner/name for pull requests
    number: int | None = None

    @property
    def label(self) -> str:
        return f"{self.repo}#{self.number}" if self.repo else self.url


@dataclass(frozen=True)
class Req:
    """One production argument and how to recognise it in upstream text."""

    label: str  # e.g. "kv-cache-dtype fp8"
    pattern: re.Pattern
    origin: Origin | None


def _recipe_engines(policy) -> str:
    """`vLLM/SGLang`: the engines that have upstream recipe sources (policy)."""
    return join((engine_name(f, policy) for f in policy.upstream_recipe_family_sources), None, sep="/")


def _matches_any(name: str, patterns: list[str]) -> bool:
    n = flag_name(name)
    return any(fnmatch.fnmatchcase(n, flag_name(p)) for p in patterns)


def _flag_names(names) -> str:
    alts = sorted({"[-_]".join(re.escape(part) for part in flag_name(n).split("-")) for n in names},
                  key=len, reverse=True)
    return "(?:" + "|".join(alts) + ")"


def _flag_pattern(names, value) -> re.Pattern:
    """`--name value`, `--name=value`, `name: value`, `"name": value` for any spelling in `names`."""
    head = rf"(?<![\w-])(?:--?)?[\"']?{_flag_names(names)}[\"']?"
    if value is True:
        return re.compile(head + r"(?![\w-])(?!\s*[=:]\s*[\"']?(?:false|0)\b)")
    val = re.escape(str(value))
    return re.compile(head + rf"(?:\s*[=:]\s*|\s+)[\"']?{val}[\"']?(?![\w.])")


def _env_pattern(name: str, value) -> re.Pattern:
    return re.compile(rf"(?<![\w]){re.escape(name)}\s*[=:]\s*[\"']?{re.escape(str(value))}[\"']?(?![\w.])")


def requirements(eff: EffectiveConfig, entry: MasterEntry | None, policy) -> list[Req]:
    """The arguments an upstream recipe must show for this effective serving config."""
    out: list[Req] = []
    model = eff.value("model")
    if model:
        model = str(model)
        model = model[len(HF_PREFIX):] if model.startswith(HF_PREFIX) else model
        out.append(Req(f"model {model}", re.compile(re.escape(model), re.IGNORECASE), eff.model))
    sku = (sku_of(entry) or "").lower() if entry is not None else ""
    if sku and policy.upstream_recipe_match_sku:
        out.append(Req(f"SKU {sku}", re.compile(rf"(?<![\w]){re.escape(sku)}(?![\w])", re.IGNORECASE), None))
    used: set[str] = set()
    for label, flags in PARALLEL:
        name = next((f for f in flags if f in eff.args), None)
        origin = eff.args.get(name) if name else getattr(eff, label.lower())
        if name:
            used.add(name)
        value = as_int(origin.value) if origin is not None else None
        if value is not None and value > 1:
            out.append(Req(f"{label} {value} ({name or flags[0]})", _flag_pattern(flags, value), origin))
    harness = policy.upstream_recipe_harness_knobs
    for name, origin in eff.args.items():
        if name in used or not _matches_any(name, policy.upstream_recipe_args) or _matches_any(name, harness):
            continue
        truth = values.truth(origin.value)
        if truth is False or origin.value is None:
            continue
        # A switch (`enable-dp-attention: true`) is matched by the bare flag, a value by flag and value.
        is_switch = isinstance(origin.value, bool) or (truth is True and isinstance(origin.value, str))
        value = True if is_switch else origin.value
        shown = f"--{name}" if value is True else f"--{name} {origin.value}"
        out.append(Req(shown, _flag_pattern([name], value), origin))
    for name, origin in eff.env.items():
        if not any(fnmatch.fnmatchcase(name, p) for p in policy.upstream_recipe_env) or name in harness:
            continue
        if origin.value is None:
            continue
        out.append(Req(f"{name}={origin.value}", _env_pattern(name, origin.value), origin))
    return out


def missing(reqs: list[Req], text: str) -> list[Req]:
    return [r for r in reqs if not r.pattern.search(text)]


def find_links(detail: str, policy) -> list[Link]:
    """Upstream recipe links in the Additional detail section, by family, first mention first."""
    allowed_repos = {r.lower() for r in policy.upstream_recipe_repos}
    allowed_sites = [s.lower().rstrip("/") for s in policy.upstream_recipe_sites]
    out: dict[str, Link] = {}
    for url in links(detail):
        pull = github_pull(url)
        for family, sources in policy.upstream_recipe_family_sources.items():
            srcs = [s.lower().rstrip("/") for s in sources]
            if pull:
                repo = pull[0]
                if repo.lower() in srcs and repo.lower() in allowed_repos:
                    canon = f"https://github.com/{repo}/pull/{pull[1]}"
                    out.setdefault(canon, Link(url=canon, family=family, repo=repo, number=pull[1]))
                continue
            bare = re.sub(r"^https?://", "", url, flags=re.IGNORECASE).lower()
            if any(bare.startswith(s) and s in allowed_sites for s in srcs):
                out.setdefault(url, Link(url=url, family=family))
    return list(out.values())


# At most this many linked upstream pull requests are read (each costs two requests).
MAX_UPSTREAM_PULLS = 10


def resolve_all(links: list[Link], snapshot) -> dict[str, UpstreamRef | None]:
    """Each link's upstream recipe, asked of the snapshot all at once (the first
    MAX_UPSTREAM_PULLS pull requests; the rest stay unresolved)."""
    asked: list[Link] = []
    pulls = 0
    for link in dict((link.url, link) for link in links).values():
        if link.repo:
            pulls += 1
            if pulls > MAX_UPSTREAM_PULLS:
                continue
        asked.append(link)
    snapshot.ask_together([lambda link=link: snapshot.upstream_ref(link.url, link.repo, link.number) for link in asked])
    out: dict[str, UpstreamRef | None] = {link.url: None for link in links}
    out.update({link.url: snapshot.upstream_ref(link.url, link.repo, link.number) for link in asked})
    return out


class UpstreamRecipeCheck:
    def _serving_points(self, ctx) -> list:
        """Affected points whose serving config the PR adds or changes (entry or recipe)."""
        changed_keys = set(ctx.affected.changed_keys)
        paths = ctx.changed_paths
        files = set() if isinstance(paths, Unavailable) else set(paths)
        out = []
        for ap in ctx.affected.points:
            p = ap.point
            launcher = p.launcher.path if p.launcher is not None else None
            if p.config_key in changed_keys or (launcher and launcher in files):
                out.append(p)
        return out

    def _family(self, ctx, framework: str | None) -> str | None:
        fam = ctx.config.policy.framework_family.get(framework or "")
        return fam if fam in ctx.config.policy.upstream_recipe_family_sources else None

    def applies(self, ctx) -> str | None:
        if isinstance(ctx.changed_paths, Unavailable):
            return None
        points = self._serving_points(ctx)
        if not points:
            return MSG_NONE_AFFECTED
        if any(self._family(ctx, p.framework) for p in points):
            return None
        frameworks = sorted({p.framework or "unknown" for p in points})
        policy = ctx.config.policy
        names = join((f"{f} ({engine_name(f, policy)} vendor engine)" if f in policy.vendor_frameworks else f
                      for f in frameworks), None)
        return MSG_VENDOR_ONLY.format(frameworks=names, engines=_recipe_engines(policy))

    def evaluate(self, ctx) -> CheckResult:
        policy = ctx.config.policy
        links = find_links(ctx.additional_detail, policy)
        resolved = resolve_all(links, ctx.snapshot)
        # family -> config key -> {argument signature: requirements}; concurrencies share one.
        groups: dict[str, dict[str, dict[tuple, list[Req]]]] = {}
        for p in self._serving_points(ctx):
            family = self._family(ctx, p.framework)
            if family is None:
                continue
            reqs = requirements(ctx.head_repo.effective(p), ctx.head_repo.entries.get(p.config_key), policy)
            sig = tuple(r.label for r in reqs)
            groups.setdefault(family, {}).setdefault(p.config_key, {}).setdefault(sig, reqs)

        failures: list[str] = []
        fail_ev: list[Evidence] = []
        passes: list[str] = []
        pass_ev: list[Evidence] = []
        if isinstance(ctx.changed_paths, Unavailable):
            failures.append(MSG_FILES_UNAVAILABLE.format(reason=ctx.changed_paths.reason, engines=_recipe_engines(policy)))
            fail_ev.append(Evidence(note="changed files", unavailable=True))
        for family, by_key in groups.items():
            fname = engine_name(family, policy)
            keys_text = join(by_key, None)
            fam_links = [l for l in links if l.family == family]
            if not fam_links:
                sources = policy.upstream_recipe_family_sources[family]
                repos = [s for s in sources if s in policy.upstream_recipe_repos]
                sites = [s for s in sources if s in policy.upstream_recipe_sites]
                failures.append(MSG_NO_LINK.format(family=fname, keys=keys_text, sources=join(repos, "or", sep=" or ") or "upstream",
                                                   sites=join(sites, "or", sep=" or ") or "upstream"))
                fail_ev.append(Evidence(note=f"no {fname} upstream link in the Additional detail section"))
                continue
            accepted: list[tuple[Link, UpstreamRef]] = []
            problems: list[tuple[str, Evidence]] = []
            # "MERGED before this PR merges" is a sub-rule of 2026-07-14 (checks.policy).
            merged_required = in_force(ctx, MERGED_RULE)
            for link in fam_links:
                ref = resolved.get(link.url)
                if ref is None or ref.unavailable:
                    why = ref.unavailable if ref is not None and ref.unavailable else MSG_NOT_FETCHED
                    problems.append((MSG_UNRESOLVED.format(ref=link.label, why=why),
                                     Evidence(url=link.url, note=link.label, unavailable=True)))
                elif ref.kind == "pull" and ref.merged is not True and merged_required:
                    if ref.merged is None:
                        problems.append((MSG_UNRESOLVED.format(ref=link.label, why=MSG_MERGE_UNKNOWN),
                                         Evidence(url=link.url, note=link.label, unavailable=True)))
                    else:
                        problems.append((MSG_UNMERGED.format(ref=link.label, state=ref.state or "open", keys=keys_text,
                                                             family=fname),
                                         Evidence(url=link.url, note=f"{link.label} {ref.state or 'open'}, not merged")))
                elif ref.text is None:
                    problems.append((MSG_UNRESOLVED.format(ref=link.label, why=MSG_NO_TEXT),
                                     Evidence(url=link.url, note=link.label, unavailable=True)))
                else:
                    accepted.append((link, ref))
            if not accepted:
                for text, ev in problems:
                    failures.append(text)
                    fail_ev.append(ev)
                continue
            matched_refs: dict[str, list[str]] = {}
            for key, sigs in by_key.items():
                for reqs in sigs.values():
                    scored = sorted(((missing(reqs, ref.text or ""), link, ref) for link, ref in accepted),
                                    key=lambda t: len(t[0]))
                    gaps, link, ref = scored[0]
                    if not gaps:
                        matched_refs.setdefault(link.label, [])
                        if key not in matched_refs[link.label]:
                            matched_refs[link.label].append(key)
                        continue
                    args = join((r.label + (f" ({r.origin.path}:{r.origin.line})" if r.origin and r.origin.line else "")
                                     for r in gaps), None)
                    failures.append(MSG_MISMATCH.format(key=key, args=args, verb=plural(len(gaps), "does", "do"),
                                                        ref=link.label))
                    fail_ev.append(Evidence(url=link.url, note=link.label))
                    fail_ev.extend(Evidence(path=r.origin.path, line=r.origin.line, note=r.label)
                                   for r in gaps if r.origin is not None)
            for link, ref in accepted:
                if link.label in matched_refs:
                    state = STATE_MERGED if ref.kind == "pull" else STATE_PAGE
                    passes.append(MSG_MATCH.format(ref=link.label, state=state, keys=join(matched_refs[link.label], None)))
                    pass_ev.append(Evidence(url=link.url, note=f"{link.label} {state}"))

        if failures:
            return CheckResult.failed(" ".join(failures + passes), *fail_ev, *pass_ev)
        return CheckResult.passed(" ".join(passes), *pass_ev)

