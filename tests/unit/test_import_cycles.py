"""No circles: evalkit's top-level packages (and top-level modules) import one another one way only,
and so do the modules inside each of them. Imports are read as tests/unit/test_layers.py reads
them: at the top of a file or inside a function they count, under `if TYPE_CHECKING:` they do not.
The layer test allows a circle inside one layer; this one does not, so that each package can be
read knowing only what lies below it. A circle is named arrow by arrow, each with the file:line
that makes it.
"""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Callable

from test_layers import ROOT, evalkit_imports, module_name

Graph = dict[str, dict[str, str]]  # importer → {imported → the first file:line importing it}


def package_of(module: str) -> str:
    """`evalkit.agent` for `evalkit.agent.tools`; `evalkit` (the package __init__) for itself."""
    return ".".join(module.split(".")[:2])


def import_graph(node_of: Callable[[str], str], within: Callable[[str, str], bool] = lambda a, b: True) -> Graph:
    """Every evalkit import as an arrow between the nodes of importer and imported (`import evalkit`
    alone, for the package's folder, is none), kept when `within(importer, imported)`."""
    graph: Graph = {}
    for path in sorted(ROOT.rglob("*.py")):
        importer = module_name(path)
        arrows = graph.setdefault(node_of(importer), {})
        for line, target in evalkit_imports(ast.parse(path.read_text(), str(path))):
            source, dest = node_of(importer), node_of(target)
            if target != "evalkit" and source != dest and within(importer, target):
                arrows.setdefault(dest, f"{path.relative_to(ROOT.parent)}:{line}")
    return graph


def circle(graph: Graph) -> list[str]:
    """One circle of `graph` as its arrows (`a → b (file:line)`), or [] when there is none."""
    try:  # graphlib reads the graph as node → what comes before it: a circle comes back reversed
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        nodes = exc.args[1][::-1]
        return [f"{a} → {b} ({graph[a][b]})" for a, b in zip(nodes, nodes[1:], strict=False)]
    return []


def test_no_circle_between_packages():
    found = circle(import_graph(package_of))
    assert not found, "evalkit's packages import one another in a circle:\n" + "\n".join(found)


def test_no_circle_between_the_modules_of_a_package():
    found = circle(import_graph(lambda module: module, lambda a, b: package_of(a) == package_of(b)))
    assert not found, "modules of one package import one another in a circle:\n" + "\n".join(found)


def test_a_circle_is_named_arrow_by_arrow_in_import_order():
    graph = {"a": {"b": "a.py:1"}, "b": {"c": "b.py:2"}, "c": {"a": "c.py:3"}, "d": {"a": "d.py:4"}}
    assert circle(graph) == ["a → b (a.py:1)", "b → c (b.py:2)", "c → a (c.py:3)"]
    del graph["c"]["a"]
    assert circle(graph) == []
