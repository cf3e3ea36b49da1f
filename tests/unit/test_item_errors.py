"""One item's error costs that item; only what fails every item alike stops a command over many."""

import errno

import requests

from evalkit.errors import EvalkitError, SetupError
from evalkit.runs.executor import NodeFailure
from evalkit.runs.item_errors import fails_every_item, item_error_line


def test_an_items_own_errors_are_its_own():
    assert not fails_every_item(EvalkitError("repo: git diff --no-color failed: fatal: unable to read 1234"))
    assert not fails_every_item(AttributeError("'str' object has no attribute 'get'"))
    assert not fails_every_item(OSError(errno.ENOENT, "No such file or directory"))


def test_the_machine_the_engine_the_cluster_and_the_options_fail_every_item():
    assert fails_every_item(SetupError("--ca-bundle x: no such file"))
    assert fails_every_item(OSError(errno.ENOSPC, "No space left on device"))
    assert fails_every_item(NodeFailure("node lost"))
    assert fails_every_item(KeyboardInterrupt())
    try:
        raise EvalkitError("sandbox failed") from requests.exceptions.ConnectionError("refused")
    except EvalkitError as wrapped:
        assert fails_every_item(wrapped)


def test_the_line_names_the_type_of_an_unexpected_error_and_keeps_evalkits_own():
    assert item_error_line(AttributeError("'str' object has no attribute 'get'\nmore")) == (
        "AttributeError: 'str' object has no attribute 'get'"
    )
    assert item_error_line(EvalkitError("git diff failed: fatal")) == "git diff failed: fatal"
    assert item_error_line(ValueError()) == "ValueError"
