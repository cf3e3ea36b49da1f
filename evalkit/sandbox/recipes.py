"""Where the sandbox recipes are (`sandboxes/`, or the wheel's copy), and what an installed
agent's recipe says: read without an engine (the agent side records an attempt's agent version
from it; the Docker backend builds the images from it, evalkit/sandbox/docker/agent_images.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import evalkit
from evalkit.errors import SandboxError

AGENTS_DIR = "agents"  # under sandboxes/
AGENT_ROOT = "/opt/evalkit-agents"  # everything an installed agent is, in its image and the layered one
_VERSION_ARG = re.compile(r"^ARG AGENT_VERSION=(\S+)\s*$", re.MULTILINE)


def agent_recipe(name: str) -> Path:
    """The recipe folder of installed agent `name`; one line when it has no Dockerfile."""
    recipe = recipes_dir() / AGENTS_DIR / name
    if not (recipe / "Dockerfile").is_file():
        raise SandboxError(f"installed agent {name}: no recipe at {recipe}/Dockerfile")
    return recipe


def recipe_version(recipe: Path) -> str:
    """The version the recipe pins (`ARG AGENT_VERSION=...` in its Dockerfile)."""
    found = _VERSION_ARG.search((recipe / "Dockerfile").read_text())
    if found is None:
        raise SandboxError(f"{recipe}/Dockerfile: pin the agent's version with a line `ARG AGENT_VERSION=X.Y.Z`")
    return found[1]


def recipes_dir() -> Path:
    """Where the recipes are: packaged with the wheel, or `sandboxes/` of a source checkout."""
    override = os.environ.get("EVALKIT_SANDBOXES")
    if override:
        return Path(override)
    package = Path(evalkit.__file__).parent
    for candidate in (package / "_recipes", package.parent / "sandboxes"):
        if candidate.is_dir():
            return candidate
    raise SandboxError("cannot find the sandbox recipes (set EVALKIT_SANDBOXES to the sandboxes/ folder)")
