"""evalkit: evaluate coding agents on short-prompt, large-diff tasks in Docker sandboxes."""

from __future__ import annotations

from typing import Any

__all__ = ["load_results"]


def __getattr__(name: str) -> Any:  # keep `import evalkit` light: pandas loads only when asked for
    if name == "load_results":
        from evalkit.results import load_results

        return load_results
    raise AttributeError(name)
