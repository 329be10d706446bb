"""Check 6 (Upstream images / ordering): vLLM/SGLang entries use upstream images; vendor engines come second.

What it checks:
    Every master-config entry the PR adds or changes whose runner is on an established SKU
    (policy `established_skus`; the SKU is the runner label without `cluster:` and without its
    `-<site>` suffix, so `cluster:mi355x-amds` is `mi355x`):
    (a) an entry whose framework family has upstream image orgs (policy `framework_family`,
    `upstream_image_orgs`: vLLM -> `vllm/`, SGLang -> `lmsysorg/`) must use a Docker Hub image
    from one of those orgs. Tags and digest pins are both fine; `#` after a registry host is read
    as `/`. A fork (`rocm/vllm-dev`, a GHCR or NGC path) fails unless a documented exception
    holds: the runner names exception hardware (policy `image_exception_hardware`), or a line
    of the Additional detail section names the config key or the image together with a
    new-architecture phrase (policy `image_exception_phrases`); such an entry passes with a
    note.
    (b) an entry with a vendor framework (policy `vendor_frameworks`: trt, atom, ...) needs an
    existing open-source entry (policy `open_source_frameworks`) with the same `model-prefix`
    and the same `runner`. "Existing" means present on the target branch tip or at the merge
    base; an open-source entry added by this same PR does not count, because the rule is that
    the open-source submission lands first.
Why it matters:
    InferenceX compares engines as their projects ship them, and vendor-tuned engines are only
    published next to an open-source baseline on the same hardware.
Evidence it cites:
    The `image` line of each entry with a fork image, the entry line of each vendor entry, and
    the open-source entries that satisfy the ordering rule.
Not applicable when:
    No master-config entry is added or changed, or every added/changed entry runs on a SKU
    outside the established list (new hardware).
How to fix:
    Switch the vLLM/SGLang entry to an image from `vllm/` or `lmsysorg/` (or state the
    new-architecture exception in the Additional detail section), and land the vLLM/SGLang
    entry for the model and runner before the vendor-engine entry.
"""
from __future__ import annotations

from typing import TypedDict

from checks.policy import BY_KEY, in_force
from checks.result import CheckResult, Evidence
from recipes.launch.path.serving import engine_display, engine_name
from recipes.master import MasterEntry, normalize_image
from recipes.points import sku_of
from checks.text import join, plural
from checks.two_readings import two_readings_result

IMAGES_RULE = "upstream-images"
ORDERING_RULE = "engine-first-ordering"
MSG_NO_CHANGES = "No master-config entry is added or changed."
MSG_NEW_SKUS_ONLY = (
    "The added or changed entries run only on SKUs outside the established list ({skus}), "
    "where the upstream-image and ordering rules do not apply."
)
MSG_UNPARSED = "could not verify: {finding}; fix the master config so its entries can be read."
MSG_UNREADABLE = "could not verify: {path} could not be read ({reason})."

MSG_A_NA = "(a) Not applicable to {article} {engine} entry."
MSG_A_NOT_IN_FORCE = "(a) The upstream-image rule was not in force yet (since {since}, {source})."
MSG_A_OK = "(a) {key} uses the upstream image {image} (org {org}/)."
MSG_A_EXC_HW = "(a) {key} uses {image}, accepted as new hardware ({token} in runner {runner})."
MSG_A_EXC_TEXT = (
    "(a) {key} uses {image}, accepted under the new-architecture exception stated in the "
    "Additional detail section (\"{quote}\")."
)
MSG_A_FORK = (
    "{key} (framework {framework}, SKU {sku}) uses {image}, which is not from {orgs}; "
    "switch to an upstream {orgs} image or state a new-hardware or new-architecture exception "
    "in the Additional detail section."
)
MSG_A_NO_IMAGE = "{key} (framework {framework}) has no image; set an upstream {orgs} image."
MSG_B_OSS = "(b) Open-source {framework} entry; no ordering requirement."
MSG_B_OTHER = "(b) Framework {framework} is neither open-source nor vendor; no ordering requirement."
MSG_B_OK = "(b) Vendor-specific {framework} entry; open-source {entries} already {verb} for {prefix} on {runner}."
MSG_B_MISSING = (
    "{key} is a vendor {framework} entry, but no open-source entry ({oss}) for {prefix} on "
    "{runner} exists on the target branch; land the {engines} entry first."
)
# Outcomes in `details["entries"]`.
UPSTREAM, FORK, NO_IMAGE = "upstream", "fork", "no-image"
EXCEPTION_HARDWARE, EXCEPTION_TEXT = "exception-hardware", "exception-text"
ORDER_OK, ORDER_MISSING, OPEN_SOURCE = "open-source-first", "no-open-source-entry", "open-source"
NOT_APPLICABLE, NOT_IN_FORCE, SKIPPED = "n/a", "not-in-force", "skipped"
MSG_SKIPPED = "{key} runs on {sku}, outside the established SKUs; not checked."

def _sku(entry: MasterEntry) -> str | None:
    sku = sku_of(entry)
    return sku.lower() if sku else None


def image_org(image: str) -> str | None:
    """The Docker Hub org of an image, or None when it lives on another registry."""
    repo = normalize_image(image).repository
    parts = repo.split("/")
    if len(parts) < 2:
        return None  # an official library image has no org
    first = parts[0]
    if "." in first or ":" in first or first == "localhost":
        return None
    return first


def _article(word: str) -> str:
    return "an" if word[:1].upper() in "AEIOU" else "a"


def _exception_line(detail: str, entry: MasterEntry, phrases: list[str]) -> str | None:
    """The Additional detail line that claims the new-architecture exception for this entry."""
    names = [entry.key.lower()]
    if entry.image:
        names += [entry.image.lower(), normalize_image(entry.image).repository.lower()]
    for line in detail.splitlines():
        low = line.lower()
        if any(n and n in low for n in names) and any(p.lower() in low for p in phrases):
            return line.strip().lstrip("-*+ ").strip()
    return None


class UpstreamImagesOrderingCheck:
    def _changed(self, ctx) -> list[MasterEntry]:
        head = ctx.head_repo.entries
        return [head[k] for k in ctx.affected.changed_keys if k in head]

    def _broken_masters(self, ctx) -> list:
        """Findings of changed master configs that could not be parsed at all."""
        changed = ctx.changed_paths
        out = []
        for path, mf in ctx.head_repo.masters.items():
            if mf.findings and not mf.entries and (not isinstance(changed, frozenset) or path in changed):
                out.append(mf.findings[0])
        return out

    def applies(self, ctx) -> str | None:
        if self._broken_masters(ctx) or any(p in ctx.snapshot.unreadable for p in ctx.head_repo.master_files):
            return None
        if two_readings_result(ctx, masters_only=True) is not None:
            return None
        if not self._changed(ctx):
            return MSG_NO_CHANGES
        policy = ctx.config.policy
        skus = {_sku(e) for e in self._changed(ctx)}
        if not skus & set(policy.established_skus):
            return MSG_NEW_SKUS_ONLY.format(skus=join(sorted(s or "?" for s in skus), None))
        return None

    def evaluate(self, ctx) -> CheckResult:
        for path in ctx.head_repo.master_files:
            if path in ctx.snapshot.unreadable:
                return CheckResult.failed(MSG_UNREADABLE.format(path=path, reason=ctx.snapshot.unreadable[path]),
                                          Evidence(path=path, unavailable=True))
        broken = self._broken_masters(ctx)
        if broken:
            f = broken[0]
            return CheckResult.failed(MSG_UNPARSED.format(finding=f), Evidence(path=f.path, line=f.line, unavailable=True))
        ambiguous = two_readings_result(ctx, masters_only=True)
        if ambiguous is not None:  # which entry (or file) is the PR's is not one thing
            return ambiguous

        policy = ctx.config.policy
        established = set(policy.established_skus)
        existing = dict(ctx.base_repo.entries)
        existing.update(ctx.target_repo.entries)
        entries = self._changed(ctx)
        many = len(entries) > 1
        images_rule, ordering_rule = in_force(ctx, IMAGES_RULE), in_force(ctx, ORDERING_RULE)
        failures: list[str] = []
        notes: list[str] = []
        evidence: list[Evidence] = []
        fail_evidence: list[Evidence] = []

        # The outcome per entry as values (tests and templates read these, not the sentences).
        details: dict[str, EntryDetails] = {}
        for entry in entries:
            framework = entry.framework or ""
            sku = _sku(entry)
            d = details[entry.key] = EntryDetails(framework=framework, sku=sku, image=entry.image,
                                                  image_rule=SKIPPED, ordering=SKIPPED, open_source_entries=[])
            if sku not in established:
                notes.append(MSG_SKIPPED.format(key=entry.key, sku=sku or "an unknown SKU"))
                continue
            parts: list[str] = []
            family = policy.framework_family.get(framework)
            # Each half of the check is its own rule with its own date (checks.policy).
            orgs = policy.upstream_image_orgs.get(family or "", []) if images_rule else []
            image_ev = Evidence(path=entry.path, line=entry.line_of("image"), note=f"{entry.key} image")
            if orgs:
                org_text = join((f"{o}/" for o in orgs), "or", sep=" or ")
                if not entry.image:
                    d["image_rule"] = NO_IMAGE
                    failures.append(MSG_A_NO_IMAGE.format(key=entry.key, framework=framework, orgs=org_text))
                    fail_evidence.append(Evidence(path=entry.path, line=entry.line, note=f"{entry.key} has no image"))
                else:
                    org = image_org(entry.image)
                    hw = next((t for t in policy.image_exception_hardware if t.lower() in (entry.runner or "").lower()), None)
                    quote = _exception_line(ctx.additional_detail, entry, policy.image_exception_phrases)
                    d["image_rule"] = (UPSTREAM if org in orgs else EXCEPTION_HARDWARE if hw else
                                       EXCEPTION_TEXT if quote else FORK)
                    if org in orgs:
                        parts.append(MSG_A_OK.format(key=entry.key, image=entry.image, org=org))
                        evidence.append(image_ev)
                    elif hw:
                        parts.append(MSG_A_EXC_HW.format(key=entry.key, image=entry.image, token=hw, runner=entry.runner))
                        evidence.append(image_ev)
                    elif quote:
                        parts.append(MSG_A_EXC_TEXT.format(key=entry.key, image=entry.image, quote=quote))
                        evidence.append(image_ev)
                    else:
                        failures.append(MSG_A_FORK.format(key=entry.key, framework=framework, sku=sku,
                                                          image=entry.image, orgs=org_text))
                        fail_evidence.append(image_ev)
            elif not images_rule:
                d["image_rule"] = NOT_IN_FORCE
                parts.append(MSG_A_NOT_IN_FORCE.format(since=BY_KEY[IMAGES_RULE].since.isoformat(),
                                                       source=BY_KEY[IMAGES_RULE].source))
            else:
                d["image_rule"] = NOT_APPLICABLE
                engine = engine_name(framework or "unknown", policy)
                parts.append(MSG_A_NA.format(article=_article(engine), engine=engine))

            if framework in policy.vendor_frameworks and ordering_rule:
                oss = [
                    k for k, e in existing.items()
                    if e.framework in policy.open_source_frameworks
                    and e.model_prefix == entry.model_prefix and e.runner == entry.runner
                ]
                d["open_source_entries"] = oss
                d["ordering"] = ORDER_OK if oss else ORDER_MISSING
                if oss:
                    parts.append(MSG_B_OK.format(framework=framework, entries=_entries_text(oss),
                                                 verb=plural(len(oss), "exists", "exist"),
                                                 prefix=entry.model_prefix, runner=entry.runner))
                    evidence.extend(Evidence(path=existing[k].path, line=existing[k].line, note=f"open-source {k}")
                                    for k in oss)
                else:
                    failures.append(MSG_B_MISSING.format(key=entry.key, framework=framework,
                                                         oss=join(policy.open_source_frameworks, None, sep="/"),
                                                         engines=_open_source_engines(policy),
                                                         prefix=entry.model_prefix, runner=entry.runner))
                    fail_evidence.append(Evidence(path=entry.path, line=entry.line, note=f"vendor entry {entry.key}"))
            elif framework in policy.open_source_frameworks:
                d["ordering"] = OPEN_SOURCE
                parts.append(MSG_B_OSS.format(framework=framework))
            else:
                d["ordering"] = NOT_IN_FORCE if framework in policy.vendor_frameworks else NOT_APPLICABLE
                parts.append(MSG_B_OTHER.format(framework=framework or "unknown"))
            text = " ".join(parts)
            notes.append(f"{entry.key}: {text}" if many else text)

        if failures:
            return CheckResult.failed(" ".join(failures), *fail_evidence, *evidence, entries=details)
        return CheckResult.passed(" ".join(notes), *evidence, entries=details)


class EntryDetails(TypedDict):
    """`details["entries"][key]`: how each added or changed entry fared, as values."""

    framework: str
    sku: str | None
    image: str | None
    image_rule: str  # UPSTREAM, EXCEPTION_*, FORK, NO_IMAGE, NOT_APPLICABLE, NOT_IN_FORCE, SKIPPED
    ordering: str  # ORDER_OK, ORDER_MISSING, OPEN_SOURCE, NOT_APPLICABLE, NOT_IN_FORCE, SKIPPED
    open_source_entries: list[str]


def _open_source_engines(policy) -> str:
    """`vLLM or SGLang`: the engines of the policy's open-source frameworks, as people write them."""
    engines = [engine_display(f, policy) for f in policy.open_source_frameworks]
    return join(engines, "or", unique=True)


def _entries_text(keys: list[str]) -> str:
    return f"{plural(len(keys), 'entry', 'entries')} {join(keys)}"

