"""Which errors of the Docker SDK say the engine itself did not answer (for `engine_unreachable`,
evalkit/sandbox/engine_watch.py, which asks this check once the package is imported)."""

from __future__ import annotations

import docker.errors
import requests.exceptions

_UNREACHABLE = (
    requests.exceptions.ConnectionError,
    requests.exceptions.Timeout,
    requests.exceptions.ChunkedEncodingError,
)


def docker_unreachable(error: BaseException) -> bool | None:
    """True for no connection, a timeout, a cut response, a 5xx from the daemon, or docker-py's own
    "cannot connect"; False for a 4xx about one container or image; None for any other error."""
    if isinstance(error, docker.errors.APIError):
        return error.status_code is not None and error.status_code >= 500
    if isinstance(error, _UNREACHABLE) or type(error) is docker.errors.DockerException:
        return True
    return None
