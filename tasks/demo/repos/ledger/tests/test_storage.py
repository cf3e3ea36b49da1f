import json

import pytest

from ledger import LedgerError, storage


def test_round_trip(book, tmp_path):
    path = tmp_path / "book.json"
    storage.save(book, path)
    loaded = storage.load(path)
    assert [a.name for a in loaded.accounts] == [a.name for a in book.accounts]
    assert loaded.balances() == book.balances()
    assert [t.id for t in loaded.transactions] == [t.id for t in book.transactions]


def test_save_leaves_no_temp_file(book, tmp_path):
    storage.save(book, tmp_path / "book.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book.json"]


def test_missing_file(tmp_path):
    with pytest.raises(LedgerError, match="ledger init"):
        storage.load(tmp_path / "nope.json")


def test_invalid_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{not json")
    with pytest.raises(LedgerError):
        storage.load(path)


def test_unknown_version(tmp_path):
    path = tmp_path / "future.json"
    path.write_text(json.dumps({"version": 99, "accounts": [], "transactions": []}))
    with pytest.raises(LedgerError, match="version"):
        storage.load(path)
