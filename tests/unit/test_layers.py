"""Imports run downward only: every `evalkit` import of every evalkit module, at the top of a file or
inside a function, names a module of the importer's own layer or of a lower one (the rule in
docs/design.md, "Layers"). Imports under `if TYPE_CHECKING:` are types only and exempt.

A layer lists module names; a module belongs to the layer of its longest listed prefix, so a
package can be placed as a whole and a single module of it placed apart. `import evalkit` alone
(to find the package folder) names no layer: every evalkit import loads that lazy `__init__`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

import evalkit

# lowest first; a module may import its own layer or a lower one
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("evalkit.errors", "evalkit.wording", "evalkit.plain_errors", "evalkit.files", "evalkit.diffs",
              "evalkit.flag_kinds", "evalkit.integrity", "evalkit.lazy_table", "evalkit.axes",
              "evalkit.cutoff",  # cutoff: the knowledge-cutoff rule, read by models, scoring and report
              "evalkit.pyparse")),  # pyparse: ast.parse one thread at a time (CPython 3.11's shared state)
    ("tasks", ("evalkit.tasks", "evalkit.envs")),  # envs: SWE-bench install specs per (repo, version)
    ("records", ("evalkit.records",  # an attempt record carries its task's limits
                 "evalkit.trajectory")),  # an attempt's events, written by agent and bridge, read above
    ("sandbox", ("evalkit.sandbox",)),
    ("models", ("evalkit.models",)),
    ("user", ("evalkit.user",)),  # the simulated user: answers the agent's questions over a model client
    ("bridge", ("evalkit.bridge",)),  # the recording model proxy that agents in a sandbox call
    ("agent", ("evalkit.agent",)),  # the tool loop, and agents in a sandbox driving the bridge
    ("review", ("evalkit.review",)),  # the reviewer agent: reads three trees in a sandbox, answers a rubric
    # judging one attempt in its sandbox: tests run and graded, task health, integrity flags
    ("verify", ("evalkit.verify",)),
    ("runs", ("evalkit.runs",)),
    ("scoring", ("evalkit.scoring",)),  # the after-the-fact axes and run scores
    ("calibration", ("evalkit.calibration",)),  # graders against sloppy variants: the axis and a reviewer
    ("report", ("evalkit.stats", "evalkit.gather", "evalkit.report", "evalkit.results", "evalkit.interchange")),
    ("cli", ("evalkit.cli", "evalkit")),  # "evalkit": the package __init__ alone
]  # fmt: skip

ROOT = Path(evalkit.__file__).parent
ROOT_PACKAGE = "evalkit"


def layer_of(module: str) -> int:
    best, found = "", -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            inside = prefix != ROOT_PACKAGE and module.startswith(prefix + ".")  # the root names itself only
            if (module == prefix or inside) and len(prefix) > len(best):
                best, found = prefix, index
    assert found >= 0, f"{module} is in no layer: add it to LAYERS (and to docs/design.md)"
    return found


def module_name(path: Path) -> str:
    parts = ["evalkit", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports_of(tree: ast.Module, wanted: Callable[[str], bool], *, types_too: bool = False) -> list[tuple[int, str]]:
    """(line, module) of every import of a `wanted` module, at the top of the file or inside a
    function; those under `if TYPE_CHECKING:` only with `types_too`."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if not types_too and _type_checking_only(node):
            for child in node.orelse:  # type: ignore[attr-defined]
                visit(child)
            return
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            module = node.module or ""
            named = [f"{module}.{a.name}" for a in node.names if wanted(f"{module}.{a.name}")]
            if wanted(module) or named:  # `from evalkit.sandbox import docker` names the package
                found.append((node.lineno, module if wanted(module) else named[0]))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names if wanted(a.name))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def evalkit_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, module) of every evalkit import outside `if TYPE_CHECKING:` blocks."""
    return imports_of(tree, lambda module: module.split(".")[0] == "evalkit")


def evalkit_modules() -> list[tuple[Path, str, ast.Module]]:
    """(path, module name, parsed source) of every evalkit module."""
    return [(path, module_name(path), ast.parse(path.read_text(), str(path))) for path in sorted(ROOT.rglob("*.py"))]


def violations() -> list[str]:
    out = []
    for path, importer, tree in evalkit_modules():
        for line, target in evalkit_imports(tree):
            # `import evalkit` alone (for its folder) loads only the lazy package __init__
            if target != "evalkit" and layer_of(target) > layer_of(importer):
                out.append(
                    f"{path.relative_to(ROOT.parent)}:{line} → {target} "
                    f"({LAYERS[layer_of(importer)][0]} imports {LAYERS[layer_of(target)][0]})"
                )
    return out


def test_every_import_runs_downward():
    found = violations()
    assert not found, f"{len(found)} imports run up the layers:\n" + "\n".join(found)


def test_every_module_has_a_layer():
    for path in ROOT.rglob("*.py"):
        layer_of(module_name(path))


def test_the_check_sees_function_level_imports_and_skips_type_checking_ones():
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from evalkit.cli import x\n"
        "def f():\n    import evalkit.report.leaderboard.output\n    from evalkit.runs.store import y\n"
    )
    assert evalkit_imports(tree) == [(5, "evalkit.report.leaderboard.output"), (6, "evalkit.runs.store")]
    assert layer_of("evalkit.verify.junit") < layer_of("evalkit.runs.store") < layer_of("evalkit.scoring.quality")
    with pytest.raises(AssertionError, match="in no layer"):  # a new top-level module must be placed
        layer_of("evalkit.new_module")
