"""Shared fixtures. Integration tests need a real Docker engine: without one they are skipped
locally with the reason shown, and fail in CI (CI=true), where an engine must answer."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from llama_server import llama_server  # noqa: F401  (a session fixture: one server for every module)

ROOT = Path(__file__).resolve().parents[1]
DEMO_SUITE = ROOT / "tasks" / "demo"
EVALKIT = str(Path(sys.executable).parent / "evalkit")


def run_evalkit(*args, timeout: float = 900, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run the installed `evalkit` console script, as a user would; `env` adds to this process's variables."""
    environ = {**os.environ, **env} if env else None
    return subprocess.run([EVALKIT, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=environ)


@pytest.fixture(scope="session")
def docker_engine():
    import docker

    from evalkit.errors import SandboxError
    from evalkit.sandbox.docker.backend import docker_client
    from evalkit.sandbox.docker.images import BASE_IMAGE, image_exists

    try:
        client = docker_client()
    except SandboxError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a Docker engine: {exc}")
        pytest.skip(f"no Docker engine: {exc}")
    if not image_exists(client, BASE_IMAGE):
        message = f"{BASE_IMAGE} missing: run `make setup` (evalkit sandbox build-base)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    yield client
    assert isinstance(client, docker.DockerClient)


@pytest.fixture(scope="session")
def backend(docker_engine):
    """One backend for the session (images and workspaces cached); at the end, no container of
    this test process may be left on the engine."""
    from evalkit.sandbox.docker.backend import DockerBackend
    from evalkit.sandbox.docker.containers import LABEL_OWNER, owner_label

    shared = DockerBackend(docker_engine, run_id=f"pytest-{secrets.token_hex(3)}")
    yield shared
    shared.close()
    leftovers = docker_engine.containers.list(all=True, filters={"label": f"{LABEL_OWNER}={owner_label()}"})
    assert not leftovers, f"tests left containers behind: {[c.short_id for c in leftovers]}"


@pytest.fixture(scope="session")
def demo_suite():
    from evalkit.tasks import load_suite

    suite = load_suite(DEMO_SUITE)
    assert not suite.skipped, [str(e) for e in suite.skipped]
    return suite


@pytest.fixture(scope="session")
def toy_suite_dir(tmp_path_factory):
    from toy import write_toy_suite

    return write_toy_suite(tmp_path_factory.mktemp("toy-suite"))


@pytest.fixture(scope="session")
def toy_task(toy_suite_dir):
    from evalkit.tasks import load_suite

    suite = load_suite(toy_suite_dir)
    assert not suite.skipped, [str(e) for e in suite.skipped]
    return suite.tasks[0]
