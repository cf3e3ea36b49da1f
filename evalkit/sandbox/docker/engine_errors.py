"""Which errors of the Docker SDK say the engine itself did not answer: the check the backend's
`EngineWatch` holds (evalkit/sandbox/engine_watch.py), and the one this package's own calls ask."""

from __future__ import annotations

import docker.errors
import requests.exceptions

from evalkit.sandbox.engine_watch import unreachable_by

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


def docker_engine_unreachable(error: BaseException) -> bool:
    """Whether `error`, or one it was raised from, says the Docker engine did not answer."""
    return unreachable_by(docker_unreachable, error)
