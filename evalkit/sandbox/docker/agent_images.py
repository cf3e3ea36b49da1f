"""Images for installed agents: an agent built once into its own image, then copied onto each
task image as a thin layer.

Why two steps: installing an agent (pip or npm, network, a minute or more) must not happen once
per task image, and it must not be baked into the task images either (scoring runs the plain task
image). So `sandboxes/agents/<name>/Dockerfile` is built once `FROM` the base into
`evalkit/agent-<name>:<hash>` (recipe files + base image id), installing everything under
`/opt/evalkit-agents/<name>`; each task image then gets `FROM <task image>` + `COPY --from=<agent
image> /opt/evalkit-agents/<name>`, tagged `evalkit/with-<name>:<hash of both image ids>`: a copy
of seconds, no network. A suite's tasks share few task images (the demo suite's eight share one):
one slow build in all, and one copy per task image.

An agent brings its own runtime (Qwen Code its node, mini-swe-agent the base's Python 3.11 with
its loader and libraries, `bundle_python.py`): a task image may be on another base, with another
Python or none, and the commands the agent runs use that image's system as it is.

A recipe's build context gets two files evalkit adds: `ca-bundle.crt` (the host's CA bundle, for
pip and npm behind a TLS-inspecting proxy) and `pip.whl` (a pip wheel: Debian's python has no
pip; run as `python3 pip.whl/pip install ...`). The pinned version is the recipe's own
`ARG AGENT_VERSION=...` line, read back by `recipe_version` so that every attempt records it.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import tempfile
from pathlib import Path

import docker
import docker.errors

from evalkit.errors import SandboxError
from evalkit.sandbox.docker.images import (
    BASE_IMAGE,
    BUILD_LOCK,
    CA_FILE,
    HOST_CA_BUNDLE,
    build_image,
    image_exists,
    pip_wheel,
    recipe_tag,
)
from evalkit.sandbox.recipes import AGENT_ROOT, agent_recipe, recipe_version

PIP_FILE = "pip.whl"


def agent_image(client: docker.DockerClient, name: str, cache: Path, base: str = BASE_IMAGE) -> str:
    """`evalkit/agent-<name>:<hash>`, built from the agent's recipe when missing (once: builds hold
    the lock every recipe build holds). `cache` keeps the pip wheel between runs."""
    recipe = agent_recipe(name)
    recipe_version(recipe)  # a recipe without its pin fails before a build
    tag = recipe_tag(client, recipe, base, f"agent-{name}")
    with BUILD_LOCK:
        if image_exists(client, tag):
            return tag
        with tempfile.TemporaryDirectory(prefix="evalkit-agent-") as tmp:
            context = Path(tmp) / name
            shutil.copytree(recipe, context)
            if HOST_CA_BUNDLE.is_file():
                shutil.copyfile(HOST_CA_BUNDLE, context / CA_FILE)
            else:
                (context / CA_FILE).write_text("")
            shutil.copyfile(pip_wheel(cache), context / PIP_FILE)
            build_image(client, context, tag, {"BASE_IMAGE": base}, f"installed agent {name} from {recipe}")
    return tag


def layered_image(client: docker.DockerClient, task_image: str, name: str, built: str) -> str:
    """`task_image` with the agent image `built`'s `/opt/evalkit-agents/<name>` copied in, tagged
    `evalkit/with-<name>:<hash of both image ids>` (made once)."""
    try:
        ids = [client.images.get(image).id for image in (task_image, built)]
    except docker.errors.ImageNotFound as exc:
        raise SandboxError(f"layering agent {name}: image missing ({exc.explanation})") from None
    tag = f"evalkit/with-{name}:{hashlib.sha256(' '.join(ids).encode()).hexdigest()[:12]}"
    folder = f"{AGENT_ROOT}/{name}"
    dockerfile = f"FROM {task_image}\nCOPY --from={built} {folder} {folder}\n"
    with BUILD_LOCK:
        if image_exists(client, tag):
            return tag
        try:
            client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True, forcerm=True)
        except (docker.errors.BuildError, docker.errors.APIError) as exc:
            raise SandboxError(f"layering agent {name} onto {task_image}: {getattr(exc, 'msg', exc)}") from None
    return tag
