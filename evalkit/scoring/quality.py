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
  errors, pyflakes, bugbear, blind and silent excepts; `quality_lint.py`), per file and rule the
  increase over the base;
- markers (0.15, 0.45): TODO / FIXME / XXX / HACK comments added (ruff's flake8-fixme);
- readability (0.1, 0.3): lines over 120 columns, trailing whitespace, functions of complexity
  over 10 that the change adds;
- hygiene (0.2, 0.6): debug prints, breakpoints, blocks of commented-out code, stray new files,
  whitespace-only hunks, edits to forbidden paths (`quality_hygiene.py`);
- suppressions (0.15, 0.45): added comments that silence a checker (`# noqa`, `# type: ignore`...);
- duplicates (0.25, 0.5): an added function whose body is another function's;
- docs (0.15, 0.45): docstrings removed, or missing where the reference or the file documents;
- churn (0.03 a line, 0.45): statements rewritten without a change in meaning (re-quoted,
  re-spaced, re-wrapped: the same tree, other text);
- scope (0.2, 0.5): each non-test source file the reference never touches (a quarter of that for
  other files), plus 0.2 x the share of the reference's files left alone;
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

import os
import shutil
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath
from types import MappingProxyType

from pydantic import BaseModel, Field

from evalkit.diffs import GIT_APPLY, PATCH_FUZZ, changed_lines, changed_paths, is_test_path
from evalkit.errors import EvalkitError
from evalkit.pyparse import parse_python
from evalkit.scoring import quality_review as review
from evalkit.scoring.quality_hygiene import (
    ChangedFile,
    added_lines,
    changed_files,
    hygiene_findings,
    non_test_diff,
    whitespace_only,
)
from evalkit.scoring.quality_lint import Linter, RuffUnavailable, run_tool

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
MARKER_RULES = ("FIX",)
HYGIENE_RULES = ("ERA001",)
READABILITY_RULES = ("E501", "W291", "W293", "C901")
CODE_SUFFIXES = (".py", ".pyi", ".pyx", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".c", ".h", ".rs", ".go")
NOT_APPLIED = "the patch does not apply to the base files"


class QualityFinding(BaseModel):
    """One thing charged: the part, the file, the line after the change (0: the whole file), what."""

    part: str
    path: str
    line: int = 0
    what: str


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


@dataclass
class Reviewed:
    """One change read as a reviewer reads it, but for ruff: the findings by part, the figures
    behind the old fields, and the touched .py files ruff compares."""

    findings: dict[str, list[QualityFinding]]
    figures: dict
    after: dict[str, bytes]  # the touched .py files as the change leaves them, by path
    before: dict[str, bytes]  # the same files in the base, by their path after
    added: dict[str, frozenset[int]] = field(default_factory=dict)  # path -> line numbers added


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


def _review(
    patch: str,
    files: list[ChangedFile],
    bases: dict[str, str | None],
    after: dict[str, str],
    reference_files: list[str],
    reference: list[ChangedFile],
    forbidden: Sequence[str],
    traits: Traits,
    root: Path,
) -> Reviewed:
    """Every finding but ruff's of one applied change (its after texts in `after`)."""
    lint_after = {f.path: (root / f.path).read_bytes() for f in files if f.lintable and (root / f.path).is_file()}
    lint_before = {
        f.path: text.encode("utf-8")  # as the base file was written for `git apply`
        for f in files
        if f.lintable and f.source and (text := bases.get(f.source)) is not None
    }
    touched = [
        review.Touched(
            f.path,
            bases.get(f.source) if f.source else None,
            after.get(f.path),
            frozenset(line.target_line_no for line in added_lines(f) if line.target_line_no),
        )
        for f in files
        if f.lintable
    ]
    syntax_errors = [
        f.path
        for f in files
        if f.lintable and f.path in after and not _parses(after[f.path]) and _parses(bases.get(f.source))
    ]
    litter = hygiene_findings(files, bases, reference, forbidden)
    non_test = [f.path for f in files if not is_test_path(f.path)]
    extra = [p for p in non_test if p not in reference_files]
    missed = [p for p in reference_files if p not in {f.path for f in files}]
    found: dict[str, list[QualityFinding]] = {part: [] for part in DEFAULT_COSTS}
    found["syntax"] = [QualityFinding(part="syntax", path=p, what="no longer parses") for p in syntax_errors]
    for name, value in litter.items():
        if name in ("debug_prints", "commented_code"):
            continue  # by function (`quality_review.debug_prints`), and by line (ruff's eradicate)
        items = value if isinstance(value, list) else [""] * value
        found["hygiene"] += [
            QualityFinding(part="hygiene", path=item or "", what=name.replace("_", " ").rstrip("s")) for item in items
        ]
    prints = review.debug_prints(touched, traits.printing)
    litter["debug_prints"] = len(prints)
    found["hygiene"] += [QualityFinding(part="hygiene", path=i.path, line=i.line, what=i.what) for i in prints]
    rules = {
        "suppressions": review.suppressions(touched),
        "duplicates": review.duplicates(touched),
        "docs": review.docs(touched, traits.documented),
        "churn": _churn(touched, {f.path: f for f in files}),
    }
    for part, items in rules.items():
        found[part] = [QualityFinding(part=part, path=i.path, line=i.line, what=i.what) for i in items]
    cosmetic = {t.path for t in touched if review.unchanged_tree(t)}
    for path in extra:
        weight = "" if path.endswith(CODE_SUFFIXES) else " (not code: a quarter)"
        what = "a file the task does not touch" + (", changed only cosmetically" if path in cosmetic else "") + weight
        found["scope"].append(QualityFinding(part="scope", path=path, what=what))
    lines = changed_lines(non_test_diff(patch))
    figures = {
        "syntax_errors": syntax_errors,
        **litter,
        "extra_files": extra,
        "missed_files": missed,
        "changed_lines": lines,
    }
    return Reviewed(found, figures, lint_after, lint_before, {t.path: t.added for t in touched})


def _churn(touched: list[review.Touched], by_path: dict[str, ChangedFile]) -> list[review.Finding]:
    """Lines rewritten without a change in meaning: whole statements (re-wrapped too), and lines a
    hunk only re-quotes or re-spaces; each line once."""
    found: dict[tuple[str, int], review.Finding] = {}
    for file in touched:
        hunks = [
            ([line.value for line in hunk if line.is_removed],
             [(line.target_line_no, line.value) for line in hunk if line.is_added])
            for hunk in by_path[file.path].patched
        ]  # fmt: skip
        spacing = {  # whitespace-only hunks are hygiene's
            line.target_line_no
            for hunk in by_path[file.path].patched
            if whitespace_only(hunk)
            for line in hunk
            if line.is_added
        }
        for finding in [*review.cosmetic_lines(file), *review.cosmetic_hunk_lines(file, hunks)]:
            if finding.line not in spacing:
                found.setdefault((finding.path, finding.line), finding)
    return [found[key] for key in sorted(found)]


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
    if unsafe := [p for f in files for p in (f.path, f.source) if p and not _inside(p)]:
        return f"{NOT_APPLIED} (path outside the repository: {unsafe[0]})"
    bases = {f.source: base_file(f.source) for f in files if f.source and not f.patched.is_binary_file}
    after = _apply(patch, files, bases, cache.workdir)
    if after is None:
        return NOT_APPLIED
    return _review(patch, files, bases, after, reference_files, reference, forbidden, traits, cache.workdir)


@dataclass(frozen=True)
class Traits:
    """What the reference's after files show that a candidate is read against: the definitions
    it documents and the places it prints from, as (path, dotted name)."""

    documented: frozenset[tuple[str, str]] = frozenset()
    printing: frozenset[tuple[str, str]] = frozenset()

    @classmethod
    def of(cls, reviewed: Reviewed | None) -> Traits:
        if reviewed is None:
            return cls()
        files = [review.Touched(p, None, t.decode("utf-8", "replace"), frozenset()) for p, t in reviewed.after.items()]
        return cls(review.documented_names(files), review.printing_places(files))


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


def _ruff_findings(reviewed: Reviewed, linter: Linter) -> tuple[dict[str, list[QualityFinding]], dict[str, int]]:
    """ruff's findings the change adds, by part (lint, markers, readability), with their lines:
    per file and rule, the after file's findings beyond the base file's count, those on added
    lines first. And the counts per rule."""
    linter.lint([*reviewed.after.items(), *reviewed.before.items()])
    found: dict[str, list[QualityFinding]] = {"lint": [], "markers": [], "readability": [], "hygiene": []}
    added_counts: Counter[str] = Counter()
    for path, text in reviewed.after.items():
        base = reviewed.before.get(path)
        before = Counter(f.code for f in linter.findings(path, base)) if base is not None else Counter()
        by_rule: dict[str, list] = {}
        for finding in linter.findings(path, text):
            by_rule.setdefault(finding.code, []).append(finding)
        added = reviewed.added.get(path, frozenset())
        for code, items in sorted(by_rule.items()):
            extra = len(items) - before[code]
            if extra <= 0:
                continue
            added_counts[code] += extra
            items = sorted(items, key=lambda f: (f.line not in added, f.line))[:extra]
            part = _ruff_part(code)
            found[part] += [
                QualityFinding(part=part, path=path, line=f.line, what=f"{code} {f.message}") for f in items
            ]
    return found, dict(sorted(added_counts.items()))


def _ruff_part(code: str) -> str:
    if code.startswith(MARKER_RULES):
        return "markers"
    if code in HYGIENE_RULES:
        return "hygiene"
    return "readability" if code in READABILITY_RULES else "lint"


def finish_quality(draft: QualityDraft, linter: Linter) -> QualityScore:
    """The draft's score, with ruff's parts (from what `linter` knows, else one ruff run)."""
    if draft.unscored is not None:
        return draft.unscored
    assert draft.change is not None
    found = {part: list(items) for part, items in draft.change.findings.items()}
    allowance = {part: len(items) for part, items in (draft.reference.findings if draft.reference else {}).items()}
    note, new_lint = None, {}
    try:
        ruff_found, new_lint = _ruff_findings(draft.change, linter)
        for part, items in ruff_found.items():
            found[part] = [*found.get(part, []), *items]
        if draft.reference is not None:
            for part, items in _ruff_findings(draft.reference, linter)[0].items():
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
            units = sum(1.0 if "(not code" not in i.what else 0.25 for i in items)
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


def _inside(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(parts) and not PurePosixPath(path).is_absolute() and ".." not in parts and parts[0] != ".git"


# --- applying the change ----------------------------------------------------------------------


def _apply(patch: str, files: list[ChangedFile], bases: dict[str, str | None], root: Path) -> dict[str, str] | None:
    """The after text of every touched text file still present, or None when the patch does not
    apply. `git apply` first, then `patch --fuzz=5`, each on a fresh copy of the base files in
    `root`, an empty repository (neither writes to `.git`: no `--index`)."""
    binary = [f.path for f in files if f.patched.is_binary_file]
    for command in (GIT_APPLY.command(exclude=binary), PATCH_FUZZ.command()):
        _empty_but_git(root)
        _write_tree(root, {path: text for path, text in bases.items() if text is not None})
        if not (root / ".git").is_dir():
            run_tool(["git", "init", "-q"], root)
        if run_tool(command, root, stdin=patch).returncode == 0:
            after = {}
            for f in files:
                target = root / f.path
                if not f.deleted and not f.patched.is_binary_file and target.is_file():
                    after[f.path] = target.read_text(encoding="utf-8", errors="replace")
            return after
    return None


def _empty_but_git(root: Path) -> None:
    """Remove what an earlier change left in `root`, keeping its `.git`."""
    if not root.is_dir():
        return
    for entry in os.scandir(root):
        if entry.name == ".git" and entry.is_dir(follow_symlinks=False):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)


def _write_tree(root: Path, texts: Mapping[str, str]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for path, text in texts.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8", newline="")


# --- lint and syntax --------------------------------------------------------------------------


@lru_cache(maxsize=1024)  # a base file is asked about once per attempt that touches it
def _parses(text: str | None) -> bool:
    """Whether `text` is valid Python; an absent file counts as valid (nothing was broken)."""
    if text is None:
        return True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. SyntaxWarning for invalid escapes: still parses
        try:
            parse_python(text)
        except (SyntaxError, ValueError):
            return False
    return True


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
