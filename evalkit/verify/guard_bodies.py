"""The guard's reading of the test files (loaded by guard_plugin.py from its own folder; standard
library only, Python 3.6 and later): which test functions' bodies run exactly once per call."""

import ast


def is_mark(decorator):
    """`@pytest.mark.x(...)` or `@mark.x`: marks change how often pytest collects a test, never
    how often its call phase runs the body."""
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    names.append(getattr(node, "id", ""))
    dotted = ".".join(reversed(names))
    return dotted.startswith(("pytest.mark.", "mark."))


def run_once(tree):
    """The names of the plain functions of a module whose every definition of that name carries
    marks only: their body runs once per call phase (anything else, hypothesis's @given or a
    retry decorator, may run it again, or raise on purpose, first)."""
    plain = {}
    for node in _definitions(tree):
        once = isinstance(node, ast.FunctionDef) and all(is_mark(d) for d in node.decorator_list)
        plain[node.name] = plain.get(node.name, True) and once
    return frozenset(name for name, once in plain.items() if once)


def _definitions(tree):
    """Every function definition of the module, the nested ones too, without walking each
    expression and statement of their bodies (the walk was the guard's largest cost on a module of
    a thousand tests): only statements that can hold a definition are entered."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, name, None)
            if isinstance(inner, list):
                stack.extend(
                    child
                    for child in inner
                    if isinstance(child, (ast.stmt, ast.excepthandler)) or type(child).__name__ == "match_case"
                )
