"""The Docker backend (`--backend docker`): every module that talks to a Docker engine. Nothing
outside this package imports it (tests/unit/test_docker_confined.py); the backend table
(evalkit/sandbox/backend_table.py) names it as a string, loaded when the backend is opened.

Importing the package checks that the Docker SDK is installed (one line saying how, if not)."""

from __future__ import annotations

from evalkit.errors import SandboxError

try:
    import docker  # noqa: F401 - the SDK every module here uses
except ImportError:
    raise SandboxError("the docker backend needs the Docker SDK: pip install 'docker>=7.1'") from None
