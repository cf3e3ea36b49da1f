"""Code-quality axis: whether a reviewer would take the change as it is, from 0 to 1, with every
finding recorded with its file and line.

Tests tell whether a change works, not whether a maintainer would merge it. This axis reads what
the change leaves behind as a reviewer does, and charges each thing a reviewer would send back:
the score is 1 minus the sum of what each part charges (each capped), so one leftover costs as
much in a two-line change as in a big one. Pure apart from `git apply` / `patch` and ruff, which
run on throw-away folders holding only the touched files (no Docker, no network).

Parts (cost per finding, the most the part can charge):
- syntax (1.0, 1.0): a touched .py file no longer parses (`ast.parse`; a new file parsed before);
- lint (0.15, 0.6): defects ruff finds that the change adds (pycodestyle's statement and runtime
  errors, pyflakes, bugbear, blind and silent excepts, unused arguments, placeholders;
  `quality_lint.py`), per file and rule the increase over the base, and dead code it adds
  (`quality_structure.py`: statements after a return, branches on a constant);
- markers (0.15, 0.45): TODO / FIXME / XXX / HACK comments added (ruff's flake8-fixme);
- readability (0.1, 0.3): lines over 120 columns, trailing whitespace, functions of complexity
  over 10 that the change adds;
- hygiene (0.2, 0.6): debug prints, breakpoints, blocks of commented-out code, stray new files,
  whitespace-only hunks, edits to forbidden paths (`quality_hygiene.py`);
- suppressions (0.15, 0.45): added comments that silence a checker (`# noqa`, `# type: ignore`...);
- duplicates (0.25, 0.5): an added function whose body is another function's, or nearly;
- docs (0.15, 0.45): docstrings removed, or missing where the reference or the file documents;
- churn (0.03 a line, 0.45): statements rewritten without a change in meaning (re-quoted,
  re-spaced, re-wrapped: the same tree, other text);
- scope (0.2, 0.5): each non-test source file the reference never touches (a quarter of that for
  other files; three quarters for a function the change alters in a file the reference touches,
  which the reference leaves alone), plus 0.2 x the share of the reference's files left alone;
- size (0.3, 0.3): 0.3 x how far the non-test changed lines fall outside 0.5x..2x the reference's.
`quality_review.py` holds the suppressions, duplicates, docs and churn rules.

What the reference change itself shows, part by part (by rule, for ruff's), is the task's own and
not charged: the maintainers merged it. So the reference scores 1, and a candidate pays only for
what it adds beyond what the task needed. Test files (by the one test-path rule,
`diffs.is_test_path`) count in neither scope nor size: writing tests is not straying. Binary
files are left out of the code rules.

A change that breaks PASS_TO_PASS tests (they pass before it) keeps that share of its score:
`broken_share` multiplies the score by the fraction still passing, so breaking them all scores 0
whatever the diff looks like; the parts are kept as they are, the count beside them.

`costs` overrides the cost per finding part by part (`[scoring.quality]` in evalkit.toml); the
costs recorded (`weights`) are those used. The score is rounded to 4 decimals; an empty patch,
or one that does not apply to the base files, scores 0 with a note and no parts.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

from pydantic import BaseModel, Field

from evalkit.diffs import changed_lines, changed_paths
from evalkit.errors import EvalkitError
from evalkit.scoring.quality_hygiene import ChangedFile, changed_files, non_test_diff
from evalkit.scoring.quality_lint import Linter, RuffUnavailable
from evalkit.scoring.quality_reading import (
    STRAY_FUNCTION,
    QualityFinding,
    Reviewed,
    Traits,
    apply_change,
    inside,
    review_change,
    ruff_findings,
)

DEFAULT_FORBIDDEN = (
    "*.lock",
    "poetry.lock",
    "Pipfile.lock",
    "uv.lock",
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
)
# part -> (cost per finding, the most the part charges)
DEFAULT_COSTS = MappingProxyType(
    {
        "syntax": (1.0, 1.0),
        "lint": (0.15, 0.6),
        "markers": (0.15, 0.45),
        "readability": (0.1, 0.3),
        "hygiene": (0.2, 0.6),
        "suppressions": (0.15, 0.45),
        "duplicates": (0.25, 0.5),
        "docs": (0.15, 0.45),
        "churn": (0.03, 0.45),
        "scope": (0.2, 0.5),
        "size": (0.3, 0.3),
    }
)
DEFAULT_WEIGHTS = MappingProxyType({part: cost for part, (cost, _) in DEFAULT_COSTS.items()})
NOT_APPLIED = "the patch does not apply to the base files"


class QualityScore(BaseModel):
    """The quality verdict on one change, with the evidence behind each part."""

    score: float | None  # None: not applicable (never, while quality needs only the diff)
    parts: dict[str, float]  # part -> 1 minus the share of its cap it charged
    weights: dict[str, float]  # part -> cost per finding used
    charged: dict[str, float] = Field(default_factory=dict)  # part -> what it took off the score
    findings: list[QualityFinding] = Field(default_factory=list)  # what was charged, with the lines
    allowed: dict[str, int] = Field(default_factory=dict)  # part -> findings the reference shows too
    # the evidence; the defaults mean "nothing found" (a change that was not scored has none)
    new_lint: dict[str, int] = Field(default_factory=dict)  # ruff rule code -> findings added in touched .py files
    syntax_errors: list[str] = Field(default_factory=list)
    debug_prints: int = 0
    breakpoints: int = 0
    commented_code: int = 0
    stray_files: list[str] = Field(default_factory=list)
    whitespace_only_hunks: int = 0
    forbidden_edits: list[str] = Field(default_factory=list)
    extra_files: list[str] = Field(default_factory=list)
    missed_files: list[str] = Field(default_factory=list)
    changed_lines: int = 0  # non-test lines, added + removed
    reference_lines: int
    size_ratio: float | None = None
    broken_pass_to_pass: int = 0  # PASS_TO_PASS tests the change made fail (`broken_share`)
    note: str | None = None


class QualityCache:
    """What scoring many changes shares: ruff's findings by file content, the reference's own
    findings by task, and one folder with an empty git repository where each change is applied in
    turn (emptied but for `.git` before each), rather than a new folder and a `git init` each
    time: folders cost more than files on a busy disk. One per run and thread (`score_run` makes
    it); `score_quality` makes its own when given none. Close it when done."""

    def __init__(self) -> None:
        self.linter = Linter()
        self.references: dict[tuple[str, tuple[str, ...]], Reviewed | None] = {}
        self._scratch = tempfile.TemporaryDirectory(prefix="evalkit-quality-")
        self.workdir = Path(self._scratch.name)

    def close(self) -> None:
        self._scratch.cleanup()

    def __enter__(self) -> QualityCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@lru_cache(maxsize=64)
def _reference_facts(reference_patch: str) -> tuple[list[str], int, list[ChangedFile]]:
    """The files the reference changes, its non-test changed lines, its files read: the same for
    every attempt at a task. Callers only read them."""
    return changed_paths(reference_patch), changed_lines(non_test_diff(reference_patch)), changed_files(reference_patch)


def score_quality(
    patch: str,
    reference_patch: str,
    base_file: Callable[[str], str | None],
    forbidden: Sequence[str] = DEFAULT_FORBIDDEN,
    weights: Mapping[str, float] | None = None,
    cache: QualityCache | None = None,
) -> QualityScore:
    """Score `patch` against the task's `reference_patch` over the base tree read by `base_file`;
    `weights`: costs per finding, part by part; `cache` carries what a run's changes share (it
    changes no score).

    A reference patch that is not a diff is the task's fault and raises `EvalkitError`; a candidate
    that is not one scores 0.
    """
    if cache is None:
        with QualityCache() as cache:
            return score_quality(patch, reference_patch, base_file, forbidden, weights, cache)
    return finish_quality(draft_quality(patch, reference_patch, base_file, forbidden, weights, cache), cache.linter)


@dataclass(frozen=True)
class QualityDraft:
    """A change scored on every part but ruff's, with the files ruff compares: the drafts of many
    changes can be linted in one ruff run (`Linter.lint(draft.lint_files)`) before each is finished."""

    unscored: QualityScore | None  # the change cannot be scored: this is its score
    weights: dict[str, float]
    change: Reviewed | None
    reference: Reviewed | None  # what the task's own change shows (None: it cannot be read)
    size: float = 1.0  # the size part as a fraction (1: within 0.5x..2x the reference)
    reference_files: int = 0

    @property
    def lint_files(self) -> list[tuple[str, bytes]]:
        files = []
        for reviewed in (self.change, self.reference):
            if reviewed is not None:
                files += [*reviewed.after.items(), *reviewed.before.items()]
        return files


def _read_change(
    patch: str, reference_patch: str, base_file: Callable[[str], str | None], forbidden: Sequence[str],
    cache: QualityCache, traits: Traits,
) -> Reviewed | str:
    """The change applied in `cache.workdir` and reviewed, or why it cannot be."""
    reference_files, _, reference = _reference_facts(reference_patch)
    if not patch.strip():
        return "empty patch"
    try:
        files = changed_files(patch)
    except EvalkitError as exc:
        return f"{NOT_APPLIED} ({exc})"
    if not files:
        return f"{NOT_APPLIED} (not a unified diff: no file headers)"
    if unsafe := [p for f in files for p in (f.path, f.source) if p and not inside(p)]:
        return f"{NOT_APPLIED} (path outside the repository: {unsafe[0]})"
    bases = {f.source: base_file(f.source) for f in files if f.source and not f.patched.is_binary_file}
    after = apply_change(patch, files, bases, cache.workdir)
    if after is None:
        return NOT_APPLIED
    return review_change(patch, files, bases, after, reference_files, reference, forbidden, traits, cache.workdir)


def _reference_review(
    reference_patch: str, base_file: Callable[[str], str | None], forbidden: Sequence[str], cache: QualityCache
) -> Reviewed | None:
    """The reference read as a candidate is (against its own traits), once per task and cache."""
    key = (reference_patch, tuple(forbidden))
    if key not in cache.references:
        first = _read_change(reference_patch, reference_patch, base_file, forbidden, cache, Traits())
        if isinstance(first, Reviewed):
            first = _read_change(reference_patch, reference_patch, base_file, forbidden, cache, Traits.of(first))
        cache.references[key] = first if isinstance(first, Reviewed) else None
    return cache.references[key]


def draft_quality(
    patch: str,
    reference_patch: str,
    base_file: Callable[[str], str | None],
    forbidden: Sequence[str],
    weights: Mapping[str, float] | None,
    cache: QualityCache,
) -> QualityDraft:
    """Everything `score_quality` does but ruff: the change applied in `cache.workdir` and read,
    and the reference's own findings (once per task and cache)."""
    costs = check_quality_costs(weights)
    reference_files, reference_lines, _ = _reference_facts(reference_patch)
    reference = _reference_review(reference_patch, base_file, forbidden, cache)
    change = _read_change(patch, reference_patch, base_file, forbidden, cache, Traits.of(reference))
    if isinstance(change, str):
        return _unscored(change, costs, reference_lines)
    ratio = round(change.figures["changed_lines"] / reference_lines, 4) if reference_lines else None
    change.figures.update(reference_lines=reference_lines, size_ratio=ratio)
    return QualityDraft(None, costs, change, reference, _size_part(ratio), len(reference_files))


def finish_quality(draft: QualityDraft, linter: Linter) -> QualityScore:
    """The draft's score, with ruff's parts (from what `linter` knows, else one ruff run)."""
    if draft.unscored is not None:
        return draft.unscored
    assert draft.change is not None
    found = {part: list(items) for part, items in draft.change.findings.items()}
    allowance = {part: len(items) for part, items in (draft.reference.findings if draft.reference else {}).items()}
    note, new_lint = None, {}
    try:
        ruff_found, new_lint = ruff_findings(draft.change, linter)
        for part, items in ruff_found.items():
            found[part] = [*found.get(part, []), *items]
        if draft.reference is not None:
            for part, items in ruff_findings(draft.reference, linter)[0].items():
                allowance[part] = len(items)
    except RuffUnavailable as exc:
        note = f"{exc}: lint, markers and readability skipped"
    charged: dict[str, float] = {}
    kept: list[QualityFinding] = []
    allowed: dict[str, int] = {}
    for part, (_, cap) in DEFAULT_COSTS.items():
        items = found.get(part, [])
        # a file that does not parse is never the task's own
        allow = 0 if part == "syntax" else min(len(items), allowance.get(part, 0))
        if allow:
            allowed[part] = allow
        items = items[allow:]
        kept += items
        cost = draft.weights[part]
        if part == "scope":
            units = sum(
                0.25 if "(not code" in i.what else 0.75 if i.what.endswith(STRAY_FUNCTION) else 1.0 for i in items
            )
            units += len(draft.change.figures["missed_files"]) / max(1, draft.reference_files)
            taken = cost * units
        elif part == "size":
            taken = cost * (1 - draft.size)
        else:
            taken = cost * len(items)
        charged[part] = round(min(cap, taken), 4)
    parts = {part: round(1 - charged[part] / cap, 4) for part, (_, cap) in DEFAULT_COSTS.items()}
    if note is not None:
        for part in ("lint", "markers", "readability"):
            parts.pop(part)
            charged.pop(part)
    return QualityScore(
        score=round(max(0.0, 1 - sum(charged.values())), 4),
        parts=parts,
        weights=dict(draft.weights),
        charged={part: value for part, value in charged.items() if value},
        findings=kept,
        allowed=allowed,
        new_lint=new_lint,
        note=note,
        **draft.change.figures,
    )


def check_quality_costs(weights: Mapping[str, float] | None) -> dict[str, float]:
    """The default costs overridden by `weights`; unknown parts and negative or all-zero costs are errors."""
    merged = {**DEFAULT_WEIGHTS, **(weights or {})}
    if unknown := sorted(set(merged) - set(DEFAULT_WEIGHTS)):
        raise ValueError(f"unknown quality parts {unknown}; known: {sorted(DEFAULT_WEIGHTS)}")
    if any(w < 0 for w in merged.values()) or not sum(merged.values()):
        raise ValueError(f"quality costs must be >= 0 and not all 0: {merged}")
    return merged


def _unscored(note: str, weights: dict[str, float], reference_lines: int) -> QualityDraft:
    score = QualityScore(score=0.0, parts={}, weights=dict(weights), reference_lines=reference_lines, note=note)
    return QualityDraft(score, weights, None, None)


def _size_part(ratio: float | None) -> float:
    if ratio is None or 0.5 <= ratio <= 2:
        return 1.0
    if ratio <= 0:
        return 0.0
    return max(0.0, min(1.0, ratio / 0.5, 2 / ratio))


def broken_share(quality: QualityScore, passed: int, failed: int) -> QualityScore:
    """`quality` with its score scaled by the share of PASS_TO_PASS tests still passing (`failed`
    of `passed + failed` broken by the change); unchanged when none broke or none were run."""
    if not failed or quality.score is None:
        return quality
    kept = passed / (passed + failed)
    return quality.model_copy(update={"score": round(quality.score * kept, 4), "broken_pass_to_pass": failed})
