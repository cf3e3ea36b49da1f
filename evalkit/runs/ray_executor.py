"""`--executor ray`: attempts as Ray tasks on the nodes of a cluster (issue 18). Only the front
door is here so far: Ray is an optional extra, so a machine without it gets one line saying how
to install it; the executor itself is designed in docs/ray-notes.md and not built yet."""

from __future__ import annotations

from evalkit.errors import EvalkitError

INSTALL_HINT = "pip install 'evalkit[ray]'"


class RayExecutor:
    name = "ray"

    @classmethod
    def connect(cls, address: str | None) -> RayExecutor:
        try:
            import ray  # noqa: F401  (the optional extra)
        except ImportError:
            raise EvalkitError(f"--executor ray: Ray is not installed; install it with {INSTALL_HINT}") from None
        raise EvalkitError("--executor ray: not built yet (issue 18, docs/ray-notes.md); use --executor local")
