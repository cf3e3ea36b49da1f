"""A recipe that fails to build leaves nothing on the engine and says which step failed."""

from __future__ import annotations

import secrets

import pytest

from evalkit.errors import SandboxError
from evalkit.sandbox.docker.images import resolve_image

pytestmark = pytest.mark.integration


def _containers_running(docker_engine, marker: str) -> list[str]:
    found = docker_engine.api.containers(all=True)
    return [c["Id"][:12] for c in found if marker in (c.get("Command") or "")]


def test_a_failed_recipe_step_leaves_no_container_and_names_the_step(docker_engine, tmp_path):
    marker = f"evalkit-failing-step-{secrets.token_hex(4)}"
    recipe = tmp_path / "failing-recipe"
    recipe.mkdir()
    (recipe / "Dockerfile").write_text(
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\n"
        f"RUN echo {marker}-ok > /tmp/ok\n"
        f"RUN echo {marker} no such $((1 + 1))-package >&2 && exit 3\n"
    )
    with pytest.raises(SandboxError) as raised:
        resolve_image(docker_engine, str(recipe))
    assert "failing-recipe" in str(raised.value) and "no such 2-package" in str(raised.value)  # what the step said
    assert _containers_running(docker_engine, marker) == []
