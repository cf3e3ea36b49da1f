"""Sloppy variants of a task's reference change: the same behaviour, sent back by any reviewer.
Each kind rewrites the reference's after texts (or one base file it leaves alone) and is rebuilt
into a diff against the base; a kind that cannot be made on a task (no function the reference
adds, no docstring, no string to re-quote) is left out for that task. Used by
`quality_calibration.py` and `evalkit reviewer calibrate`; kept out of the suites."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tempfile
import tokenize
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evalkit.diffs import is_test_path, parsed_diff, patched_text


@dataclass(frozen=True)
class Change:
    """A reference change read into texts: base and after per touched text file, the after line
    numbers it adds, and the base files it leaves alone (for the unrelated edit)."""

    base: dict[str, str | None]
    after: dict[str, str | None]
    added: dict[str, set[int]]
    untouched_sources: list[str]


def read_change(patch: str, base_file: Callable[[str], str | None], listing: list[str]) -> Change | None:
    """None when the change has binary files or renames (rebuilding them is out of scope)."""
    base, after, added = {}, {}, {}
    for patched in parsed_diff(patch):
        if patched.is_binary_file or patched.is_rename:
            return None
        path = (patched.source_file if patched.is_removed_file else patched.target_file).removeprefix("b/")
        path = path.removeprefix("a/")
        base[path] = None if patched.is_added_file else base_file(path)
        after[path] = patched_text(base[path], patch, path)
        added[path] = {line.target_line_no for hunk in patched for line in hunk if line.is_added}
    sources = [p for p in listing if p.endswith(".py") and not is_test_path(p) and p not in base]
    return Change(base, after, added, sources)


def diff_of(base: dict[str, str | None], after: dict[str, str | None]) -> str:
    """The diff from `base` to `after` as git makes it (`git diff --no-index`, the algorithm the
    tasks' own diffs came from: the same hunks for the same change)."""
    with tempfile.TemporaryDirectory(prefix="evalkit-variant-") as tmp:
        root = Path(tmp)
        for side, texts in (("a", base), ("b", after)):
            (root / side).mkdir()
            for path in after:
                text = texts.get(path)
                if text is not None:
                    (root / side / path).parent.mkdir(parents=True, exist_ok=True)
                    (root / side / path).write_text(text, encoding="utf-8", newline="")
        done = subprocess.run(
            ["git", "diff", "--no-index", "--no-prefix", "--no-color", "--no-ext-diff", "a", "b"],
            cwd=root, capture_output=True, text=True, check=False,
        )  # fmt: skip
    return done.stdout


def _sources(change: Change) -> list[str]:
    return [p for p, t in change.after.items() if p.endswith(".py") and t is not None and not is_test_path(p)]


def _tree(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except SyntaxError:
        return None


def _added_functions(change: Change) -> list[tuple[str, ast.FunctionDef]]:
    """Functions of the sources whose lines the reference adds or changes, largest first."""
    found = []
    for path in _sources(change):
        tree = _tree(change.after[path] or "")
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
                if lines & change.added[path]:
                    found.append((path, node))
    return sorted(found, key=lambda f: -((f[1].end_lineno or 0) - f[1].lineno))


def _with(change: Change, path: str, text: str) -> dict[str, str | None]:
    return {**change.after, path: text}


def _body_start(text: str, node: ast.FunctionDef) -> tuple[int, str]:
    """The line index where the body starts after the docstring, and its indentation."""
    body = node.body
    documented = len(body) > 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    first = body[1] if documented else body[0]
    line = text.splitlines()[first.lineno - 1]
    return first.lineno - 1, line[: len(line) - len(line.lstrip())]


def _insert(text: str, index: int, new: list[str]) -> str:
    lines = text.splitlines(keepends=True)
    return "".join(lines[:index] + [n + "\n" for n in new] + lines[index:])


def dead_copy(change: Change) -> dict | None:
    for path, node in _added_functions(change):
        if node.col_offset or node.decorator_list:
            continue  # a top-level function, so the copy is one too
        text = change.after[path] or ""
        lines = text.splitlines(keepends=True)
        source = "".join(lines[node.lineno - 1 : node.end_lineno])
        copy = re.sub(rf"^(\s*(?:async\s+)?def\s+){node.name}\b", rf"\g<1>{node.name}_old", source, count=1)
        return _with(change, path, "".join(lines[: node.end_lineno] + ["\n\n", copy] + lines[node.end_lineno :]))
    return None


def _in_function(change: Change, lines: list[str]) -> dict | None:
    for path, node in _added_functions(change):
        text = change.after[path] or ""
        index, indent = _body_start(text, node)
        return _with(change, path, _insert(text, index, [indent + line for line in lines]))
    return None


def hack_markers(change: Change) -> dict | None:
    return _in_function(change, ["# TODO: quick hack, clean up later", "# FIXME: this is wrong for some inputs"])


def debug_print(change: Change) -> dict | None:
    return _in_function(change, ['print("DEBUG", "here")'])


def swallowed_error(change: Change) -> dict | None:
    return _in_function(change, ["try:", "    pass", "except Exception:", "    pass"])


def _statement_ends(change: Change, path: str) -> list[int]:
    """Added lines (1-based) that end a simple statement and hold nothing of a string."""
    text = change.after[path] or ""
    tree = _tree(text)
    if tree is None:
        return []
    ends = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not hasattr(node, "body") and node.lineno == node.end_lineno:
            ends.add(node.lineno)
    lines = text.splitlines()
    kept = ends & change.added[path]
    return sorted(n for n in kept if "#" not in lines[n - 1] and not lines[n - 1].rstrip().endswith("\\"))


def _append(change: Change, suffixes: list[str], count: int) -> dict | None:
    for path in _sources(change):
        ends = _statement_ends(change, path)
        if len(ends) < min(count, 2):
            continue
        lines = (change.after[path] or "").splitlines(keepends=True)
        for i, number in enumerate(ends[:count]):
            line = lines[number - 1].rstrip("\n")
            lines[number - 1] = line + suffixes[i % len(suffixes)] + "\n"
        return _with(change, path, "".join(lines))
    return None


def suppressions(change: Change) -> dict | None:
    return _append(change, ["  # noqa", "  # type: ignore"], 5)


def trailing_whitespace(change: Change) -> dict | None:
    return _append(change, ["   "], 5)


def joined_statements(change: Change) -> dict | None:
    for path in _sources(change):
        text = change.after[path] or ""
        ends = set(_statement_ends(change, path))
        lines = text.splitlines(keepends=True)
        for n in sorted(ends):
            if n + 1 in ends:
                a, b = lines[n - 1].rstrip("\n"), lines[n].rstrip("\n")
                indent = a[: len(a) - len(a.lstrip())]
                if b[: len(b) - len(b.lstrip())] != indent:
                    continue
                pad = 200 - len(a) - 1 - len(b.strip())  # one 200-character line
                joined = f"{a};{' ' * max(1, pad)}{b.strip()}"
                new = lines[: n - 1] + [joined + "\n"] + lines[n + 1 :]
                candidate = "".join(new)
                if _tree(candidate) is not None:
                    return _with(change, path, candidate)
    return None


def commented_code(change: Change) -> dict | None:
    for path, node in _added_functions(change):
        text = change.after[path] or ""
        index, indent = _body_start(text, node)
        body = text.splitlines()[index : (node.end_lineno or index)]
        code = [line.strip() for line in body if line.strip() and not line.strip().startswith("#")][:4]
        if len(code) >= 2:
            return _with(change, path, _insert(text, index, [f"{indent}# {line}" for line in code]))
    return None


def unused_names(change: Change) -> dict | None:
    for path in _sources(change):
        text = change.after[path] or ""
        tree = _tree(text)
        if tree is None:
            continue
        index = 0
        for node in tree.body:  # after the docstring and `from __future__` imports
            is_doc = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            if is_doc or isinstance(node, ast.ImportFrom) and node.module == "__future__":
                index = node.end_lineno or index
            else:
                break
        return _with(change, path, _insert(text, index, ["import os, sys", "_UNUSED_LIMIT = 42"]))
    return None


def docstrings_removed(change: Change) -> dict | None:
    for path in _sources(change):
        text = change.after[path] or ""
        tree = _tree(text)
        if tree is None:
            continue
        cut = []
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and len(node.body) > 1:
                first = node.body[0]
                docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                span = range(first.lineno, (first.end_lineno or first.lineno) + 1)
                if docstring and isinstance(first.value.value, str) and set(span) <= change.added[path]:
                    cut.append((first.lineno, first.end_lineno or first.lineno))
        if cut:
            lines = text.splitlines(keepends=True)
            for start, end in sorted(cut, reverse=True):
                del lines[start - 1 : end]
            result = "".join(lines)
            if _tree(result) is not None:
                return _with(change, path, result)
    return None


def _requote(text: str, lines: set[int], limit: int) -> tuple[str, int]:
    """`text` with the plain one-line strings of `lines` (1-based) given the other quote style."""
    out = text.splitlines(keepends=True)
    done: set[int] = set()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text, 0
    for token in reversed(tokens):
        row, col = token.start
        if token.type != tokenize.STRING or row not in lines or token.end[0] != row:
            continue
        value = token.string
        if not value or value[0] not in "'\"" or value[:3] in ("'''", '"""') or "\\" in value:
            continue
        other = "'" if value[0] == '"' else '"'
        if other in value[1:-1]:
            continue
        if row not in done and len(done) >= limit:
            continue
        line = out[row - 1]
        out[row - 1] = line[:col] + other + value[1:-1] + other + line[token.end[1] :]
        done.add(row)
    return "".join(out), len(done)


def requote(change: Change) -> dict | None:
    for path in _sources(change):
        text = change.after[path] or ""
        untouched = set(range(1, len(text.splitlines()) + 1)) - change.added[path]
        result, count = _requote(text, untouched, 20)
        if count >= 5 and _tree(result) is not None:
            return _with(change, path, result)
    return None


def unrelated_edit(change: Change, base_file: Callable[[str], str | None]) -> tuple[dict, dict] | None:
    """A cosmetic edit (three strings re-quoted) to a source file the reference leaves alone."""
    for path in change.untouched_sources:
        text = base_file(path)
        if not text:
            continue
        result, count = _requote(text, set(range(1, len(text.splitlines()) + 1)), 3)
        if count and _tree(result) is not None:
            return {**change.base, path: text}, {**change.after, path: result}
    return None


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def near_copy(change: Change) -> dict | None:
    """The largest added function copied below itself as `<name>_v2`, its last statement replaced
    by `return None`: a copy kept with a statement changed, never called."""
    for path, node in _added_functions(change):
        if node.col_offset or node.decorator_list or len(node.body) < 2:
            continue
        lines = (change.after[path] or "").splitlines(keepends=True)
        last = node.body[-1].lineno - node.lineno
        copy = lines[node.lineno - 1 : node.body[-1].lineno - 1] + [
            _indent(lines[node.body[-1].lineno - 1]) + "return None\n"
        ]
        copy[0] = re.sub(rf"^(\s*(?:async\s+)?def\s+){node.name}\b", rf"\g<1>{node.name}_v2", copy[0], count=1)
        if last < 1 or not copy[0].lstrip().startswith(("def ", "async def ")):
            continue
        return _with(change, path, "".join(lines[: node.end_lineno] + ["\n\n", *copy] + lines[node.end_lineno :]))
    return None


def unreachable_code(change: Change) -> dict | None:
    """Two statements after the final `return` of an added function."""
    for path, node in _added_functions(change):
        last = node.body[-1]
        if isinstance(last, ast.Return):
            text = change.after[path] or ""
            indent = _indent(text.splitlines()[last.lineno - 1])
            return _with(
                change,
                path,
                _insert(text, last.end_lineno or last.lineno, [f"{indent}result = None", f"{indent}return result"]),
            )
    return None


def dead_branch(change: Change) -> dict | None:
    """`if False:` holding a debugging print, at the start of a changed function."""
    return _in_function(change, ["if False:", '    print("unused path")'])


def stream_debug(change: Change) -> dict | None:
    return _in_function(change, ["import sys", 'sys.stderr.write("got here\\n")'])


def unused_parameter(change: Change) -> dict | None:
    """`debug=False` added to the parameters of a changed function, read nowhere."""
    for path, node in _added_functions(change):
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or not args.args:
            continue
        lines = (change.after[path] or "").splitlines(keepends=True)
        line = lines[node.lineno - 1]
        match = re.search(r"\)(\s*->[^:]*)?:\s*(#.*)?$", line.rstrip("\n"))
        if match is None:
            continue
        lines[node.lineno - 1] = line[: match.start()] + ", debug=False" + line[match.start() :]
        if _tree(text := "".join(lines)) is not None:
            return _with(change, path, text)
    return None


def renamed_local(change: Change) -> dict | None:
    """A local variable of a function the reference leaves alone, in a file it touches, renamed
    throughout that function: an edit the task did not need."""
    for path in _sources(change):
        text = change.after[path] or ""
        tree = _tree(text)
        for node in ast.walk(tree) if tree else ():
            if (
                not isinstance(node, ast.FunctionDef)
                or set(range(node.lineno, (node.end_lineno or 0) + 1)) & change.added[path]
            ):
                continue
            stored = [
                n.id
                for n in ast.walk(node)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and len(n.id) > 2
            ]
            if not stored:
                continue
            lines = text.splitlines(keepends=True)
            for i in range(node.lineno - 1, node.end_lineno or node.lineno):
                lines[i] = re.sub(rf"\b{stored[0]}\b", f"{stored[0]}_value", lines[i])
            if _tree(renamed := "".join(lines)) is not None:
                return _with(change, path, renamed)
    return None


def rewrapped_calls(change: Change) -> dict | None:
    """Up to three one-line calls of a touched file the reference leaves alone rewrapped one
    argument a line: churn."""
    for path in _sources(change):
        text = change.after[path] or ""
        tree = _tree(text)
        if tree is None:
            continue
        calls = [
            n for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and n.lineno == n.end_lineno
            and len(n.value.args) >= 2 and not n.value.keywords and n.lineno not in change.added[path]
        ]  # fmt: skip
        lines = text.splitlines(keepends=True)
        done = 0
        for node in sorted(calls, key=lambda n: -n.lineno)[:3]:
            call = node.value
            func, args = ast.get_source_segment(text, call.func), [ast.get_source_segment(text, a) for a in call.args]  # type: ignore[attr-defined]
            if func is None or None in args:
                continue
            indent = _indent(lines[node.lineno - 1])
            lines[node.lineno - 1] = (
                f"{indent}{func}(\n" + "".join(f"{indent}    {a},\n" for a in args) + f"{indent})\n"
            )
            done += 1
        if done and _tree(rewrapped := "".join(lines)) is not None:
            return _with(change, path, rewrapped)
    return None


def placeholders(change: Change) -> dict | None:
    """`pass` and an `if True: pass` at the start of a changed function."""
    return _in_function(change, ["pass", "if True:", "    pass"])


KINDS: dict[str, Callable[[Change], dict | None]] = {
    "dead_copy": dead_copy,
    "hack_markers": hack_markers,
    "suppressions": suppressions,
    "docstrings_removed": docstrings_removed,
    "requote": requote,
    "joined_statements": joined_statements,
    "debug_print": debug_print,
    "commented_code": commented_code,
    "unused_names": unused_names,
    "trailing_whitespace": trailing_whitespace,
    "swallowed_error": swallowed_error,
    "near_copy": near_copy,
    "unreachable_code": unreachable_code,
    "dead_branch": dead_branch,
    "stream_debug": stream_debug,
    "unused_parameter": unused_parameter,
    "renamed_local": renamed_local,
    "rewrapped_calls": rewrapped_calls,
    "placeholders": placeholders,
}
ALL_KINDS = [*KINDS, "unrelated_edit"]


def variants(patch: str, base_file: Callable[[str], str | None], listing: list[str]) -> dict[str, str]:
    """Kind -> the variant's diff, for every kind that can be made on this change."""
    change = read_change(patch, base_file, listing)
    if change is None:
        return {}
    made = {}
    for kind, make in KINDS.items():
        after = make(change)
        if after is not None:
            made[kind] = diff_of(change.base, after)
    if (unrelated := unrelated_edit(change, base_file)) is not None:
        made["unrelated_edit"] = diff_of(*unrelated)
    return {kind: diff for kind, diff in made.items() if diff.strip()}
