import json

import pytest

from kvstore import CorruptLogError, KVError
from kvstore.record import DELETE, SET, Record


def test_set_record_round_trip():
    rec = Record(SET, "user:1", {"name": "Zoë", "tags": [1, 2]})
    line = rec.to_line()
    assert "\n" not in line
    assert Record.from_line(line, 1) == rec


def test_delete_record_has_no_value():
    line = Record(DELETE, "gone").to_line()
    assert json.loads(line) == {"op": "del", "k": "gone"}
    assert Record.from_line(line, 1) == Record(DELETE, "gone")


def test_unserializable_value():
    with pytest.raises(KVError):
        Record(SET, "k", object()).to_line()


def test_nan_is_rejected():
    with pytest.raises(KVError):
        Record(SET, "k", float("nan")).to_line()


@pytest.mark.parametrize(
    "line",
    [
        '{"op":"set","k":"a"',
        "[1, 2]",
        '{"op":"put","k":"a","v":1}',
        '{"op":"set","k":1,"v":1}',
        '{"op":"set","k":"a"}',
    ],
    ids=["truncated", "not-an-object", "unknown-op", "non-string-key", "missing-value"],
)
def test_bad_lines_raise_corrupt_log_error(line):
    with pytest.raises(CorruptLogError) as info:
        Record.from_line(line, 7)
    assert info.value.lineno == 7
    assert "line 7" in str(info.value)
