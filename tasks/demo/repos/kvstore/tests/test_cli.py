import json

from kvstore import Store


def test_set_and_get(cli):
    assert cli("set", "name", "alice")[0] == 0
    assert cli("set", "age", "42")[0] == 0
    assert cli("get", "name")[1] == "alice\n"
    assert cli("get", "age")[1] == "42\n"


def test_values_are_json_when_possible(cli, db):
    cli("set", "n", "42")
    cli("set", "obj", '{"a": [1, 2]}')
    cli("set", "s", "42", "--string")
    with Store(db) as s:
        assert s["n"] == 42
        assert s["obj"] == {"a": [1, 2]}
        assert s["s"] == "42"


def test_get_missing_key(cli):
    code, out, err = cli("get", "nope")
    assert code == 1
    assert out == ""
    assert "not found" in err


def test_del(cli):
    cli("set", "a", "1")
    assert cli("del", "a")[0] == 0
    assert cli("del", "a")[0] == 1


def test_keys_with_prefix(cli):
    for key in ["b:1", "a:1", "a:2"]:
        cli("set", key, "x")
    assert cli("keys")[1].split() == ["a:1", "a:2", "b:1"]
    assert cli("keys", "--prefix", "a:")[1].split() == ["a:1", "a:2"]


def test_dump(cli):
    cli("set", "a", "1")
    cli("set", "b", "[true]")
    code, out, _ = cli("dump")
    assert code == 0
    assert json.loads(out) == {"a": 1, "b": [True]}


def test_compact(cli, db):
    for i in range(5):
        cli("set", "a", str(i))
    code, out, _ = cli("compact")
    assert code == 0
    assert "dropped 4 records" in out
    assert len(db.read_text().splitlines()) == 1


def test_corrupt_log_is_reported(cli, db):
    db.write_text("garbage\n")
    code, _, err = cli("get", "a")
    assert code == 1
    assert "line 1" in err


def test_unknown_command_exits_2(cli):
    assert cli("frobnicate")[0] == 2
