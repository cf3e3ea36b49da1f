"""Where a change works, by definition: the functions, classes and methods whose bodies it edits or
which it adds, read with `ast` from each file before and after the change. A diff's hunk headers
and context lines name the neighbours of a change, not the change (a hint had said "around
`split_iter`, `rstrip`" for a change to `research`). Pure: file texts and the diff in."""

from __future__ import annotations

import ast
from collections import Counter

from evalkit.diffs import parsed_diff
from evalkit.gather.interface import Texts
from evalkit.pyparse import parse_python

Spans = dict[int, str]  # line number → qualified name of the innermost definition holding it


def _spans(text: str | None) -> Spans:
    """Each line's definition: a class holds its own lines, a method those of its body; a function
    holds the definitions nested in it (they are its body). {} when the text does not parse."""
    try:
        tree = parse_python(text or "")
    except SyntaxError:
        return {}
    found: Spans = {}

    def visit(body: list[ast.stmt], owner: str) -> None:
        for node in body:
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            name = f"{owner}.{node.name}" if owner else node.name
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            found.update(dict.fromkeys(range(start, (node.end_lineno or node.lineno) + 1), name))
            if isinstance(node, ast.ClassDef):
                visit(node.body, name)  # its methods hold their lines, after the class took them

    visit(tree.body, "")
    return found


def _private(name: str) -> bool:
    return any(part.startswith("_") and not part.endswith("__") for part in name.split("."))


def edited_definitions(patch: str, sources: Texts) -> list[str]:
    """Qualified names ("Lexer.feed", "parse") of the definitions the change edits or adds, most
    changed lines first (then in diff and file order); blank lines count for none. A definition the
    change removes is left out, and so is a new private one (the solution's structure, not a place),
    and a class one of whose members is named."""
    counts: Counter[tuple[int, str]] = Counter()  # (file in the diff, name) → changed lines
    start: dict[tuple[int, str], int] = {}  # where the definition starts after the change
    for index, patched in enumerate(parsed_diff(patch)):
        if patched.path not in sources:
            continue
        before, after = sources[patched.path]
        old, new = _spans(before), _spans(after)
        existing, kept = set(old.values()), set(new.values())
        for number, name in sorted(new.items(), reverse=True):
            start[index, name] = number
        for line in (line for hunk in patched for line in hunk if line.value.strip()):
            if line.is_added:
                name = new.get(line.target_line_no or 0)
            elif line.is_removed:
                name = old.get(line.source_line_no or 0)
            else:
                continue
            if name in kept and not (_private(name) and name not in existing):
                counts[index, name] += 1
    ranked = list(dict.fromkeys(name for _, name in sorted(counts, key=lambda k: (-counts[k], k[0], start[k]))))
    return [n for n in ranked if not any(m.startswith(n + ".") for m in ranked)]  # a member says more
