"""The reviewer's reading tools: list, read and search the files of the base, candidate and
reference trees (review_trees.py). Each runs a command of evalkit's own making in the review
sandbox, its arguments quoted and its paths kept inside the tree; none can write."""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable

from evalkit.review.review_trees import TREES, ReviewTrees

OUTPUT_CHARS = 12_000  # of one tool's answer: what a reviewer reads in one go
LIST_LIMIT = 400
SEARCH_LIMIT = 200
READ_LINES = 400  # lines of one read_file call without an end
TOOL_TIMEOUT_S = 30.0

_TREE = {"type": "string", "enum": list(TREES), "description": "base, candidate (default) or reference."}
READING_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "list_files",
            "description": "The files under a folder of a tree (paths relative to the repository root).",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "A folder; default the root."}, "tree": _TREE},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "A file of a tree with its line numbers, or the lines start_line..end_line of it.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "tree": _TREE,
                    "start_line": {"type": "integer", "minimum": 1},
                    "end_line": {"type": "integer", "minimum": 1},
                },
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Lines matching an extended regular expression (grep -E) in a tree, as path:line:text.",
            "parameters": {
                "type": "object",
                "properties": {
                    "pattern": {"type": "string"},
                    "tree": _TREE,
                    "path": {"type": "string", "description": "A folder or file to search; default the root."},
                },
                "required": ["pattern"],
            },
        },
    },
]
READING_TOOL_NAMES = frozenset(t["function"]["name"] for t in READING_TOOLS)


class ToolRefused(ValueError):
    """An argument the tools do not take (said to the reviewer as the tool's answer)."""


def _inside(path: object) -> str:
    """`path` as a relative path inside a tree, or ToolRefused."""
    if path is None or path == "":
        return "."
    if not isinstance(path, str):
        raise ToolRefused("path must be a string")
    normal = posixpath.normpath(path.lstrip("/") if path.startswith("/") else path)
    if normal == ".." or normal.startswith("../"):
        raise ToolRefused(f"{path}: outside the repository")
    return normal


def _tree(arguments: dict) -> str:
    tree = arguments.get("tree") or "candidate"
    if tree not in TREES:
        raise ToolRefused(f"tree must be one of {', '.join(TREES)}")
    return tree


def _line(value: object, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ToolRefused(f"{name} must be a positive integer")
    return value


def _capped(text: str) -> str:
    if len(text) <= OUTPUT_CHARS:
        return text
    return text[:OUTPUT_CHARS] + f"\n[... cut at {OUTPUT_CHARS} characters: read a narrower range ...]"


class ReviewTools:
    """Runs the reading tools against one task's trees."""

    def __init__(self, trees: ReviewTrees) -> None:
        self.trees = trees
        self._run: dict[str, Callable[[dict], str]] = {
            "list_files": self._list,
            "read_file": self._read,
            "search": self._search,
        }

    def call(self, name: str, arguments: dict) -> str:
        """The tool's answer as the reviewer reads it (a refusal or a failure says why)."""
        try:
            return _capped(self._run[name](arguments))
        except ToolRefused as exc:
            return f"error: {exc}"

    def _exec(self, tree: str, command: str) -> tuple[int, str]:
        result = self.trees.sandbox.exec(
            f"cd {shlex.quote(self.trees.paths[tree])} && {command}", timeout=TOOL_TIMEOUT_S
        )
        return result.exit_code, (result.stdout + result.stderr).rstrip("\n")

    def _list(self, arguments: dict) -> str:
        tree, path = _tree(arguments), _inside(arguments.get("path"))
        code, out = self._exec(
            tree,
            f"find {shlex.quote(path)} -path '*/.git' -prune -o -type f -print | sed 's|^\\./||' | sort "
            f"| head -n {LIST_LIMIT + 1}",
        )
        lines = out.splitlines()
        if not lines:
            return f"no files under {path} in the {tree} tree"
        more = f"\n[... more than {LIST_LIMIT} files: list a folder ...]" if len(lines) > LIST_LIMIT else ""
        return "\n".join(lines[:LIST_LIMIT]) + more

    def _read(self, arguments: dict) -> str:
        tree, path = _tree(arguments), _inside(arguments.get("path"))
        start = _line(arguments.get("start_line"), "start_line") or 1
        end = _line(arguments.get("end_line"), "end_line") or start + READ_LINES - 1
        q = shlex.quote(path)
        code, out = self._exec(
            tree,
            f"if [ ! -f {q} ]; then echo 'no such file in the {tree} tree: '{q}; exit 1; fi; "
            f"awk -v s={start} -v e={end} 'NR>=s && NR<=e {{printf \"%6d  %s\\n\", NR, $0}} NR>e {{exit}}' {q}",
        )
        return out if out or code else f"{path} has no lines from {start} in the {tree} tree"

    def _search(self, arguments: dict) -> str:
        tree, path = _tree(arguments), _inside(arguments.get("path"))
        pattern = arguments.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise ToolRefused("pattern must be a non-empty string")
        code, out = self._exec(
            tree,
            f"grep -rnIE --exclude-dir=.git -e {shlex.quote(pattern)} -- {shlex.quote(path)} | sed 's|^\\./||' "
            f"| head -n {SEARCH_LIMIT}",
        )
        return out or f"no match for {pattern!r} in the {tree} tree"
