"""Docker stays in its package: no evalkit module outside evalkit/sandbox/docker/ imports the
Docker SDK (`docker`) or a module of that package, not even for types; the backend table names it
as a string (docs/design.md, "Sandbox"). So the backend-neutral code (verify, gather, runs) loads
without the SDK, and another backend can be added beside Docker without it."""

from __future__ import annotations

import ast

from test_layers import ROOT, evalkit_modules, imports_of

DOCKER_PACKAGE = "evalkit.sandbox.docker"


def _dockers(module: str) -> bool:
    top = module.split(".")[0]
    return top == "docker" or module == DOCKER_PACKAGE or module.startswith(DOCKER_PACKAGE + ".")


def docker_imports_outside() -> list[str]:
    out = []
    for path, importer, tree in evalkit_modules():
        if importer == DOCKER_PACKAGE or importer.startswith(DOCKER_PACKAGE + "."):
            continue
        for line, target in imports_of(tree, _dockers, types_too=True):
            out.append(f"{path.relative_to(ROOT.parent)}:{line} imports {target}")
    return out


def test_only_the_docker_package_imports_docker():
    found = docker_imports_outside()
    assert not found, "Docker imported outside evalkit/sandbox/docker/:\n" + "\n".join(found)


def test_the_check_sees_every_kind_of_docker_import():
    tree = ast.parse(
        "import docker.errors\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from evalkit.sandbox.docker.backend import DockerBackend\n"
        "def f():\n    from evalkit.sandbox import docker\n    import dockerfile_parse\n"
    )
    found = imports_of(tree, _dockers, types_too=True)
    assert found == [(1, "docker.errors"), (4, "evalkit.sandbox.docker.backend"), (6, "evalkit.sandbox.docker")]
