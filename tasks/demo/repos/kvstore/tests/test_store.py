import pytest

from kvstore import CorruptLogError, InvalidKey, KVError, Store


def test_set_and_get(store):
    store.set("a", 1)
    store["b"] = {"x": [1, 2]}
    assert store.get("a") == 1
    assert store["b"] == {"x": [1, 2]}
    assert store.get("missing") is None
    assert store.get("missing", 5) == 5


def test_getitem_missing_raises_key_error(store):
    with pytest.raises(KeyError):
        store["nope"]


def test_overwrite(store):
    store.set("a", 1)
    store.set("a", 2)
    assert store["a"] == 2
    assert len(store) == 1


def test_delete(store):
    store.set("a", 1)
    assert store.delete("a") is True
    assert store.delete("a") is False
    assert "a" not in store
    with pytest.raises(KeyError):
        del store["a"]


def test_persistence_across_reopen(db):
    with Store(db) as s:
        s.set("a", 1)
        s.set("b", "two")
        s.set("a", 3)
        s.delete("b")
        s.set("c", None)
    with Store(db) as s:
        assert s.items() == [("a", 3), ("c", None)]


def test_keys_sorted_and_prefix(store):
    for key in ["user:2", "user:1", "group:1"]:
        store.set(key, True)
    assert store.keys() == ["group:1", "user:1", "user:2"]
    assert store.keys("user:") == ["user:1", "user:2"]
    assert list(store) == ["group:1", "user:1", "user:2"]


@pytest.mark.parametrize("key", ["", 5, None, "k" * 257], ids=["empty", "int", "none", "too-long"])
def test_invalid_keys(store, key):
    with pytest.raises(InvalidKey):
        store.set(key, 1)


def test_unserializable_value_is_not_written(store, db):
    with pytest.raises(KVError):
        store.set("a", {1, 2})
    assert "a" not in store
    assert db.read_text() == ""


def test_compact_drops_dead_records(db):
    with Store(db) as s:
        for i in range(10):
            s.set("counter", i)
        s.set("tmp", 1)
        s.delete("tmp")
        assert s.compact() == 11
        s.set("after", True)
    assert len(db.read_text().splitlines()) == 2
    with Store(db) as s:
        assert s.items() == [("after", True), ("counter", 9)]


def test_closed_store_rejects_writes(db):
    s = Store(db)
    s.close()
    assert s.closed
    with pytest.raises(KVError):
        s.set("a", 1)


def test_corrupt_log_reports_line(db):
    db.write_text('{"op":"set","k":"a","v":1}\nnot json\n{"op":"set","k":"b","v":2}\n')
    with pytest.raises(CorruptLogError) as info:
        Store(db)
    assert info.value.lineno == 2
