"""A change read as a reviewer reads it, for the quality axis (`quality.py` prices what this
finds): the change applied to the base files in a scratch repository, then every finding with its
part, file and line; ruff's findings the change adds, sorted into parts; what the reference shows
of its own (`Traits`) that a candidate is read against."""

from __future__ import annotations

import os
import shutil
import warnings
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path, PurePosixPath

from pydantic import BaseModel

from evalkit.diffs import GIT_APPLY, PATCH_FUZZ, changed_lines, is_test_path
from evalkit.pyparse import parse_python
from evalkit.scoring import quality_review as review
from evalkit.scoring import quality_structure as structure
from evalkit.scoring.quality_hygiene import (
    ChangedFile,
    added_lines,
    hygiene_findings,
    non_test_diff,
    whitespace_only,
)
from evalkit.scoring.quality_lint import Linter, run_tool

MARKER_RULES = ("FIX",)
HYGIENE_RULES = ("ERA001",)
READABILITY_RULES = ("E501", "W291", "W293", "C901")
STRAY_FUNCTION = "(a function: three quarters)"  # scope units: a file 1, a function in a touched file 0.75
CODE_SUFFIXES = (".py", ".pyi", ".pyx", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".c", ".h", ".rs", ".go")


class QualityFinding(BaseModel):
    """One thing charged: the part, the file, the line after the change (0: the whole file), what."""

    part: str
    path: str
    line: int = 0
    what: str


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
class Traits:
    """What the reference's after files show that a candidate is read against: the definitions
    it documents and the places it prints from, as (path, dotted name)."""

    documented: frozenset[tuple[str, str]] = frozenset()
    printing: frozenset[tuple[str, str]] = frozenset()
    changed: frozenset[tuple[str, str]] | None = None  # the functions it alters (None: not known)

    @classmethod
    def of(cls, reviewed: Reviewed | None) -> Traits:
        if reviewed is None:
            return cls()
        files = [
            review.Touched(p, before.decode("utf-8", "replace") if (before := reviewed.before.get(p)) else None,
                           t.decode("utf-8", "replace"), frozenset())
            for p, t in reviewed.after.items()
        ]  # fmt: skip
        return cls(review.documented_names(files), review.printing_places(files), structure.changed_functions(files))


def review_change(
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
        if f.lintable and f.path in after and not parses(after[f.path]) and parses(bases.get(f.source))
    ]
    litter = hygiene_findings(files, bases, reference, forbidden)
    non_test = [f.path for f in files if not is_test_path(f.path)]
    extra = [p for p in non_test if p not in reference_files]
    missed = [p for p in reference_files if p not in {f.path for f in files}]
    found: dict[str, list[QualityFinding]] = defaultdict(list)
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
    exact = review.duplicates(touched)
    rules = {
        "suppressions": review.suppressions(touched),
        "duplicates": exact + structure.near_duplicates(touched, exact),
        "lint": structure.dead_code(touched),  # ruff's findings join these
        "docs": review.docs(touched, traits.documented),
        "churn": churn(touched, {f.path: f for f in files}),
    }
    for part, items in rules.items():
        found[part] = [QualityFinding(part=part, path=i.path, line=i.line, what=i.what) for i in items]
    cosmetic = {t.path for t in touched if review.unchanged_tree(t)}
    for path in extra:
        weight = "" if path.endswith(CODE_SUFFIXES) else " (not code: a quarter)"
        what = "a file the task does not touch" + (", changed only cosmetically" if path in cosmetic else "") + weight
        found["scope"].append(QualityFinding(part="scope", path=path, what=what))
    if traits.changed is not None:
        strays = structure.stray_functions(touched, traits.changed, set(reference_files))
        found["scope"] += [
            QualityFinding(part="scope", path=i.path, line=i.line, what=f"{i.what} {STRAY_FUNCTION}") for i in strays
        ]
    lines = changed_lines(non_test_diff(patch))
    figures = {
        "syntax_errors": syntax_errors,
        **litter,
        "extra_files": extra,
        "missed_files": missed,
        "changed_lines": lines,
    }
    return Reviewed(found, figures, lint_after, lint_before, {t.path: t.added for t in touched})


def churn(touched: list[review.Touched], by_path: dict[str, ChangedFile]) -> list[review.Finding]:
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


def ruff_findings(reviewed: Reviewed, linter: Linter) -> tuple[dict[str, list[QualityFinding]], dict[str, int]]:
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


def inside(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(parts) and not PurePosixPath(path).is_absolute() and ".." not in parts and parts[0] != ".git"


def apply_change(
    patch: str, files: list[ChangedFile], bases: dict[str, str | None], root: Path
) -> dict[str, str] | None:
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


@lru_cache(maxsize=1024)  # a base file is asked about once per attempt that touches it
def parses(text: str | None) -> bool:
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
