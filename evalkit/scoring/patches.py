"""Facts about unified diffs (files and lines changed), read with `unidiff`."""

from __future__ import annotations

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from evalkit.errors import EvalkitError


def _parse(diff: str) -> PatchSet:
    try:
        return PatchSet(diff)
    except UnidiffParseError as exc:
        raise EvalkitError(f"not a unified diff: {exc}") from None


def _strip_prefix(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


def changed_paths(diff: str) -> list[str]:
    """Every file a diff touches (the new path; the old one for deletions)."""
    paths = []
    for patched in _parse(diff):
        path = patched.source_file if patched.is_removed_file else patched.target_file
        paths.append(_strip_prefix(path))
    return paths


def changed_lines(diff: str) -> int:
    """Added plus removed lines, headers excluded."""
    return sum(p.added + p.removed for p in _parse(diff))
