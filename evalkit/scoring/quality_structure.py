"""What a reviewer sends back about the shape of a change rather than its lines: code that can
never run, functions pasted with a few tokens changed, and definitions the task never needed
touched. Pure, like `quality_review.py`: the change's files before and after in, findings out.

- `dead_code`: statements the change adds after a `return`, `raise`, `continue` or `break` of the
  same block, and branches on a constant (`if False:`, `if 0:`, `if True:`; `while True` is a
  loop, not a branch);
- `near_duplicates`: a function the change adds whose body, as the tree says, is at least
  NEAR_SHARE like another function's of a touched file (an exact copy is `quality_review.duplicates`'):
  a copy kept with a statement changed;
- `changed_functions` and `stray_functions`: the functions a change alters (by dotted name, by
  tree: a cosmetic edit is churn's), and those a candidate alters in a file the reference touches
  while the reference leaves them alone.
Which of these the reference change itself shows is the task's own (`quality.py` subtracts it)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from difflib import SequenceMatcher

from evalkit.scoring.quality_review import MIN_DUPLICATE_NODES, Finding, Touched, _qualified, _tree, undocumented_body

NEAR_SHARE = 0.85  # how alike two bodies' trees are (difflib's ratio) for one to be a copy of the other
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ENDS = (ast.Return, ast.Raise, ast.Continue, ast.Break)
_BLOCKS = ("body", "orelse", "finalbody")


def _blocks(tree: ast.AST) -> Iterator[list[ast.stmt]]:
    for node in ast.walk(tree):
        for name in _BLOCKS:
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block
        for handler in getattr(node, "handlers", None) or []:
            yield handler.body


def dead_code(files: list[Touched]) -> list[Finding]:
    """Added statements no run reaches, and added branches on a constant."""
    found = []
    for file in files:
        tree = _tree(file.after)
        if tree is None:
            continue
        for block in _blocks(tree):
            for before, statement in zip(block, block[1:], strict=False):
                if isinstance(before, _ENDS) and statement.lineno in file.added:
                    kind = type(before).__name__.lower()
                    found.append(Finding(file.path, statement.lineno, f"unreachable: after a `{kind}`"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.If | ast.While)
                and node.lineno in file.added
                and isinstance(node.test, ast.Constant)
            ):
                if isinstance(node, ast.While) and node.test.value:
                    continue
                found.append(Finding(file.path, node.lineno, f"a branch on a constant: `{ast.unparse(node.test)}`"))
    return sorted(set(found), key=lambda f: (f.path, f.line))


def _shape(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str] | None:
    """The body (docstring aside) as a sequence of node kinds, names and values; None when too
    small for likeness to mean anything."""
    body = undocumented_body(function)
    tokens: list[str] = []
    for statement in body:
        for node in ast.walk(statement):
            tokens.append(type(node).__name__)
            for field in ("id", "attr", "arg", "name"):
                value = getattr(node, field, None)
                if isinstance(value, str):
                    tokens.append(value)
            if isinstance(node, ast.Constant):
                tokens.append(repr(node.value)[:40])
    nodes = sum(isinstance(node, ast.stmt | ast.expr) for statement in body for node in ast.walk(statement))
    return tokens if nodes >= MIN_DUPLICATE_NODES else None


def near_duplicates(files: list[Touched], exact: list[Finding]) -> list[Finding]:
    """Functions whose `def` line the change adds and whose body is nearly another function's
    (not those `exact` names already): the later of the two when both are added."""
    copied = {(f.path, f.line) for f in exact}
    functions = []
    for file in files:
        tree = _tree(file.after)
        for node in ast.walk(tree) if tree else ():
            if isinstance(node, _FUNCTIONS) and (shape := _shape(node)) is not None:
                functions.append((file, node, shape))
    found = []
    for file, node, shape in functions:
        if node.lineno not in file.added or (file.path, node.lineno) in copied:
            continue
        for other_file, other, other_shape in functions:
            if other is node or not 0.7 <= len(other_shape) / len(shape) <= 1.4:
                continue
            if other.lineno in other_file.added and (other_file.path, other.lineno) > (file.path, node.lineno):
                continue  # of two added alike, the first is not the copy
            matcher = SequenceMatcher(None, shape, other_shape, autojunk=False)
            if matcher.quick_ratio() >= NEAR_SHARE and matcher.ratio() >= NEAR_SHARE:
                where = f"{other_file.path}:{other.lineno}"
                found.append(Finding(file.path, node.lineno, f"`{node.name}` nearly repeats `{other.name}` ({where})"))
                break
    return found


def _meaning(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The function's tree without its docstring (a docstring's loss is the docs rule's)."""
    return (
        ast.dump(ast.Module(body=undocumented_body(function), type_ignores=[]))
        + ast.dump(function.args)
        + str([ast.dump(d) for d in function.decorator_list])
    )


def _altered(base: dict[str, ast.AST], after: dict[str, ast.AST]) -> set[str]:
    """The dotted names of the functions of `after` that `base` lacks or has with another tree."""
    return {
        name
        for name, node in after.items()
        if isinstance(node, _FUNCTIONS) and ((old := base.get(name)) is None or _meaning(old) != _meaning(node))  # type: ignore[arg-type]
    }


def _definitions(text: str | None) -> dict[str, ast.AST] | None:
    """The file's functions and classes by dotted name; None when it does not parse (or is gone)."""
    tree = _tree(text)
    return None if tree is None else _qualified(tree)


def changed_functions(files: list[Touched]) -> frozenset[tuple[str, str]]:
    """(path, dotted name) of every function the change adds or alters by its tree (its
    docstring aside)."""
    return frozenset(
        (file.path, name)
        for file in files
        if (after := _definitions(file.after)) is not None
        for name in _altered(_definitions(file.before) or {}, after)
    )


def stray_functions(
    files: list[Touched], reference_changed: frozenset[tuple[str, str]], reference_files: set[str]
) -> list[Finding]:
    """Functions that existed in the base, in files the reference also changes, that the change
    alters (by tree) and the reference leaves alone: work the task did not ask for. Only the
    innermost function counts (a method's change is not its class's)."""
    found = []
    for file in files:
        if file.path not in reference_files or file.before is None or (now := _definitions(file.after)) is None:
            continue
        base = _definitions(file.before) or {}
        changed = _altered(base, now)
        for name in sorted(changed):
            inner = any(other.startswith(name + ".") for other in changed)
            if name in base and (file.path, name) not in reference_changed and not inner:
                found.append(Finding(file.path, now[name].lineno, f"`{name}`, which the task does not touch, changed"))
    return found
