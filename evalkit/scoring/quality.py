"""Code-quality axis: how clean the diff an agent produced is, from 0 to 1, with each part recorded.

Tests tell whether a change works, not whether a reviewer would take it: this axis scores what
the change leaves behind. It is pure apart from `git apply` / `patch` and ruff, which run on
throw-away folders holding only the touched files (no Docker, no network).

Parts, each in 0..1:

- lint = max(0, 1 - 0.1 * findings the change adds). ruff runs with `--isolated --select
  E4,E7,E9,F,B --target-version py311` (import placement, statements, runtime errors, pyflakes,
  bugbear: rules that point at defects, not at taste) on the touched .py files before and after;
  per file and rule only the increase counts, so existing debt is not charged to the change.
  Skipped (its weight spread over the other parts) when no ruff is found.
- syntax = 0 if a touched .py file no longer parses with `ast.parse` (a new file counts as having
  parsed before), else 1.
- hygiene = max(0, 1 - 0.25 * litter), litter being debug prints (an added line that is a bare
  `print(` call in a file whose base had no `print(` call, or a `pprint(` / `ic(` call),
  breakpoints (`breakpoint()`, `pdb.set_trace()`, `import pdb` / `ipdb`), blocks of two or more
  added comment lines that parse as code and are not prose, stray new files (backups, rejects,
  logs, bytecode, scratch or root-level scripts the reference does not add), hunks that only
  change whitespace, and edits to forbidden paths (lock files by default) the reference does not
  make.
- scope = max(0, 1 - 0.5 * extra / touched non-test files - 0.5 * missed / reference files):
  non-test files the reference never touched, and reference files left alone.
- size = 1 when the non-test changed lines are within 0.5x..2x the reference's, else
  min(r / 0.5, 2 / r) (1 when the reference changes no lines).

Test files (by the one test-path rule, `diffs.is_test_path`: under `tests/`, `test/` or `testing/`,
a `tests/` folder anywhere, `test_*.py`, `*_test.py`, `conftest.py`) count in neither scope nor
size: writing tests is not straying. Binary files are left out of lint and syntax.

A change that breaks PASS_TO_PASS tests (they pass before it) keeps that share of its score:
`broken_share` multiplies the score by the fraction still passing, so breaking them all scores 0
whatever the diff looks like; the parts are kept as they are, the count beside them.

Default weights: lint 0.25, syntax 0.2, hygiene 0.25, scope 0.15, size 0.15; `weights` overrides
them part by part, and the weights recorded are those used, normalised to sum to 1. The score is
the weighted mean over the parts present, rounded to 4 decimals; an empty patch, or one that does
not apply to the base files, scores 0 with a note and no parts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePosixPath
from types import MappingProxyType

from pydantic import BaseModel, Field

from evalkit.diffs import GIT_APPLY, PATCH_FUZZ, changed_lines, changed_paths, is_test_path
from evalkit.errors import EvalkitError
from evalkit.pyparse import parse_python
from evalkit.scoring.quality_hygiene import ChangedFile, changed_files, hygiene_findings, non_test_diff
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
DEFAULT_WEIGHTS = MappingProxyType({"lint": 0.25, "syntax": 0.2, "hygiene": 0.25, "scope": 0.15, "size": 0.15})
NOT_APPLIED = "the patch does not apply to the base files"


class QualityScore(BaseModel):
    """The quality verdict on one change, with the evidence behind each part."""

    score: float | None  # None: not applicable (never, while quality needs only the diff)
    parts: dict[str, float]
    weights: dict[str, float]
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
    """What scoring many changes shares: ruff's findings by file content, and one folder with an
    empty git repository where each change is applied in turn (emptied but for `.git` before
    each), rather than a new folder and a `git init` each time: folders cost more than files on a
    busy disk. One per run and thread (`score_run` makes it); `score_quality` makes its own when
    given none. Close it when done."""

    def __init__(self) -> None:
        self.linter = Linter()
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
    `cache` carries what a run's changes share (it changes no score).

    A reference patch that is not a diff is the task's fault and raises `EvalkitError`; a candidate
    that is not one scores 0.
    """
    if cache is None:
        with QualityCache() as cache:
            return score_quality(patch, reference_patch, base_file, forbidden, weights, cache)
    return finish_quality(draft_quality(patch, reference_patch, base_file, forbidden, weights, cache), cache.linter)


@dataclass(frozen=True)
class QualityDraft:
    """A change scored on every part but lint, with the files lint compares: the drafts of many
    changes can be linted in one ruff run (`Linter.lint(draft.lint_files)`) before each is finished."""

    unscored: QualityScore | None  # the change cannot be scored: this is its score
    weights: dict[str, float]
    parts: dict[str, float]  # every part but lint, unrounded
    figures: dict  # the QualityScore fields behind the parts
    after: dict[str, bytes]  # the touched .py files as the change leaves them, by path
    before: dict[str, bytes]  # the same files in the base, by their path after

    @property
    def lint_files(self) -> list[tuple[str, bytes]]:
        return [*self.after.items(), *self.before.items()]


def draft_quality(
    patch: str,
    reference_patch: str,
    base_file: Callable[[str], str | None],
    forbidden: Sequence[str],
    weights: Mapping[str, float] | None,
    cache: QualityCache,
) -> QualityDraft:
    """Everything `score_quality` does but lint: the change applied in `cache.workdir` and read."""
    weights = _check_weights(weights)
    reference_files, reference_lines, reference = _reference_facts(reference_patch)
    if not patch.strip():
        return _unscored("empty patch", weights, reference_lines)
    try:
        files = changed_files(patch)
    except EvalkitError as exc:
        return _unscored(f"{NOT_APPLIED} ({exc})", weights, reference_lines)
    if not files:
        return _unscored(f"{NOT_APPLIED} (not a unified diff: no file headers)", weights, reference_lines)
    if unsafe := [p for f in files for p in (f.path, f.source) if p and not _inside(p)]:
        return _unscored(f"{NOT_APPLIED} (path outside the repository: {unsafe[0]})", weights, reference_lines)
    bases = {f.source: base_file(f.source) for f in files if f.source and not f.patched.is_binary_file}
    after = _apply(patch, files, bases, cache.workdir)
    if after is None:
        return _unscored(NOT_APPLIED, weights, reference_lines)
    root = cache.workdir
    lint_after = {f.path: (root / f.path).read_bytes() for f in files if f.lintable and (root / f.path).is_file()}
    lint_before = {
        f.path: text.encode("utf-8")  # as the base file was written for `git apply`
        for f in files
        if f.lintable and f.source and (text := bases.get(f.source)) is not None
    }

    syntax_errors = [
        f.path
        for f in files
        if f.lintable and f.path in after and not _parses(after[f.path]) and _parses(bases.get(f.source))
    ]
    litter = hygiene_findings(files, bases, reference, forbidden)
    touched = [f.path for f in files if not is_test_path(f.path)]
    extra = [p for p in touched if p not in reference_files]
    missed = [p for p in reference_files if p not in {f.path for f in files}]
    lines = changed_lines(non_test_diff(patch))
    ratio = round(lines / reference_lines, 4) if reference_lines else None

    parts = {"syntax": 0.0 if syntax_errors else 1.0}
    litter_count = sum(len(found) if isinstance(found, list) else found for found in litter.values())
    parts["hygiene"] = max(0.0, 1 - 0.25 * litter_count)
    parts["scope"] = max(
        0.0, 1 - 0.5 * len(extra) / max(1, len(touched)) - 0.5 * len(missed) / max(1, len(reference_files))
    )
    parts["size"] = _size_part(ratio)
    figures = {
        "syntax_errors": syntax_errors,
        **litter,
        "extra_files": extra,
        "missed_files": missed,
        "changed_lines": lines,
        "reference_lines": reference_lines,
        "size_ratio": ratio,
    }
    return QualityDraft(None, weights, parts, figures, lint_after, lint_before)


def finish_quality(draft: QualityDraft, linter: Linter) -> QualityScore:
    """The draft's score, with the lint part (from what `linter` knows, else one ruff run)."""
    if draft.unscored is not None:
        return draft.unscored
    try:
        new_lint, note = _new_lint(draft.after, draft.before, linter), None
    except RuffUnavailable as exc:
        new_lint, note = None, f"{exc}: lint part skipped"
    parts = {} if new_lint is None else {"lint": max(0.0, 1 - 0.1 * sum(new_lint.values()))}
    parts = {name: round(value, 4) for name, value in {**parts, **draft.parts}.items()}
    used = _normalise({name: draft.weights[name] for name in parts})
    return QualityScore(
        score=round(sum(parts[name] * used[name] for name in parts), 4),
        parts=parts,
        weights=used,
        new_lint=new_lint or {},
        note=note,
        **draft.figures,
    )


def _check_weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    """The defaults overridden by `weights`; unknown parts and negative or all-zero weights are errors."""
    merged = {**DEFAULT_WEIGHTS, **(weights or {})}
    if unknown := sorted(set(merged) - set(DEFAULT_WEIGHTS)):
        raise ValueError(f"unknown quality parts {unknown}; known: {sorted(DEFAULT_WEIGHTS)}")
    if any(w < 0 for w in merged.values()) or not sum(merged.values()):
        raise ValueError(f"quality weights must be >= 0 and not all 0: {merged}")
    return merged


def _normalise(weights: dict[str, float]) -> dict[str, float]:
    total = sum(weights.values())
    return {name: (w / total if total else 0.0) for name, w in weights.items()}


def _unscored(note: str, weights: dict[str, float], reference_lines: int) -> QualityDraft:
    score = QualityScore(score=0.0, parts={}, weights=_normalise(weights), reference_lines=reference_lines, note=note)
    return QualityDraft(score, weights, {}, {}, {}, {})


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


def _new_lint(after: dict[str, bytes], before: dict[str, bytes], linter: Linter) -> dict[str, int]:
    """Findings per rule the change adds over its touched .py files (after minus before, per file)."""
    linter.lint([*after.items(), *before.items()])  # one ruff run for both sides, if not linted yet
    found_before = linter.counts(before)
    added: Counter[str] = Counter()
    for path, counts in linter.counts(after).items():
        added.update(counts - found_before.get(path, Counter()))
    return dict(sorted(added.items()))


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
