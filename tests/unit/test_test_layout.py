"""pytest imports test modules by basename (rootdir-relative packages are not used here), so two
test files with one name in tests/unit and tests/integration stop the whole collection: seen
twice, each time only in a fresh clone's `make test`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_has_its_own_basename():
    names = Counter(path.name for path in TESTS.rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []
