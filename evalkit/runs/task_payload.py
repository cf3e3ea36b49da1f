"""A task as it travels to a cluster node: the record, its workspace archive (built by the driver,
which has the suite and the repository), and, when its image is a recipe folder of the suite on
the driver's disk, that folder packed. On the node the folder is unpacked once into the cache,
under its content hash and its own name, so the image built there gets the tag (recipe name and
content hash) it has on every other node."""

from __future__ import annotations

import hashlib
import io
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from evalkit.sandbox.protocol import DistributesImages, SandboxBackend, require
from evalkit.sandbox.workspace import Workspace, default_repo_cache
from evalkit.tasks.model import Task


@dataclass(frozen=True)
class TaskPayload:
    task: Task
    workspace: Workspace
    recipe: bytes | None = None  # the task's recipe folder, packed (None: a recipe of evalkit or an image ref)
    image: str | None = None  # with --registry: the task's image tag, pushed there by the driver
    registry: str | None = None

    @classmethod
    def pack(
        cls, task: Task, workspace: Workspace, image: str | None = None, registry: str | None = None
    ) -> TaskPayload:
        """`task` ready to travel; with `registry`, its image is `image` there (the recipe stays home)."""
        folder = Path(task.image)
        if registry is not None or not (folder.is_absolute() and (folder / "Dockerfile").is_file()):
            return cls(task, workspace, image=image, registry=registry)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            tar.add(folder, arcname=folder.name)
        return cls(task, workspace, buf.getvalue())

    def landed(self, cache: Path | None = None) -> Task:
        """The task as this node runs it: its recipe folder (if it travelled) unpacked here."""
        if self.recipe is None:
            return self.task
        root = (cache or default_repo_cache().parent) / "recipes"
        target = root / hashlib.sha256(self.recipe).hexdigest()[:16]
        name = Path(self.task.image).name
        if not (target / name).is_dir():
            root.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=root))
            try:
                with tarfile.open(fileobj=io.BytesIO(self.recipe)) as tar:
                    tar.extractall(tmp, filter="data")
                tmp.rename(target)
            except OSError:  # another worker unpacked it first
                if not (target / name).is_dir():
                    raise
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        return self.task.model_copy(update={"image": str(target / name)})


def travelling(task: Task, backend: SandboxBackend, registry: str | None) -> TaskPayload:
    """`task` packed for a node by the driver's `backend`: its workspace, and its recipe folder or
    (with `registry`) its image, pushed there."""
    image = None
    if registry is not None:
        image = require(backend, DistributesImages, f"--registry {registry}").publish_image(task, registry)
    return TaskPayload.pack(task, backend.workspace(task), image, registry)
