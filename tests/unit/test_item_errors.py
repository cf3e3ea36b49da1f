"""One item's error costs that item; only what fails every item alike stops a command over many."""

import errno

import requests

from evalkit.errors import EvalkitError, SetupError
from evalkit.runs.executor import NodeFailure
from evalkit.runs.item_errors import fails_every_item, item_error_line
from evalkit.sandbox.docker.engine_errors import docker_engine_unreachable
from evalkit.sandbox.engine_watch import EngineWatch

NO_ENGINE = EngineWatch(lambda: True).unreachable  # a backend with no engine that can go away


def test_an_items_own_errors_are_its_own():
    assert not fails_every_item(
        EvalkitError("repo: git diff --no-color failed: fatal: unable to read 1234"), docker_engine_unreachable
    )
    assert not fails_every_item(AttributeError("'str' object has no attribute 'get'"), docker_engine_unreachable)
    assert not fails_every_item(OSError(errno.ENOENT, "No such file or directory"), docker_engine_unreachable)


def test_the_machine_the_engine_the_cluster_and_the_options_fail_every_item():
    assert fails_every_item(SetupError("--ca-bundle x: no such file"), NO_ENGINE)
    assert fails_every_item(OSError(errno.ENOSPC, "No space left on device"), NO_ENGINE)
    assert fails_every_item(NodeFailure("node lost"), NO_ENGINE)
    assert fails_every_item(KeyboardInterrupt(), NO_ENGINE)
    try:
        raise EvalkitError("sandbox failed") from requests.exceptions.ConnectionError("refused")
    except EvalkitError as wrapped:
        assert fails_every_item(wrapped, docker_engine_unreachable)
        assert not fails_every_item(wrapped, NO_ENGINE)  # no engine: not that engine's error


def test_the_line_names_the_type_of_an_unexpected_error_and_keeps_evalkits_own():
    assert item_error_line(AttributeError("'str' object has no attribute 'get'\nmore")) == (
        "AttributeError: 'str' object has no attribute 'get'"
    )
    assert item_error_line(EvalkitError("git diff failed: fatal")) == "git diff failed: fatal"
    assert item_error_line(ValueError()) == "ValueError"
