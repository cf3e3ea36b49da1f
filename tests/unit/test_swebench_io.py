"""SWE-bench rows in and out, on real (partial) SWE-bench copies: tests/fixtures/swebench/README.md."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import DEMO_SUITE
from rich.console import Console

from evalkit.errors import EvalkitError
from evalkit.interchange import export_command, import_command
from evalkit.sandbox.workspace import build_workspace
from evalkit.tasks import load_suite
from evalkit.tasks.swebench import (
    SWEBENCH_COLUMNS,
    export_notes,
    export_swebench,
    import_swebench,
    read_swebench_rows,
    write_swebench,
)
from evalkit.tasks.write import write_suite

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "swebench"
VERIFIED_CSV = FIXTURES / "swe_bench_verified_mini50.csv"
LITE_JSONL = FIXTURES / "swe_bench_lite_partial274.jsonl"
TEST_LISTS = ("FAIL_TO_PASS", "PASS_TO_PASS")


@pytest.fixture(scope="module")
def csv_rows() -> list[dict[str, str]]:
    """The Verified rows as the standard library reads them: the reference for every comparison."""
    with VERIFIED_CSV.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def verified_rows() -> list[dict]:
    return read_swebench_rows(str(VERIFIED_CSV))


def comparable(rows: list[dict]) -> list[dict]:
    """The 12 columns, test lists parsed (their JSON spelling is not part of the data)."""
    return [{c: json.loads(r[c]) if c in TEST_LISTS else r[c] for c in SWEBENCH_COLUMNS} for r in rows]


def test_csv_rows_are_read_as_strings_untouched(verified_rows, csv_rows):
    assert len(verified_rows) == 50
    assert verified_rows == csv_rows  # every cell a string, as written (versions like "3.0" stay "3.0")


def test_verified_rows_import_as_tasks_keeping_ids_commits_and_tests(verified_rows, csv_rows):
    tasks, problems = import_swebench(verified_rows, None)
    assert problems == []
    assert [t.id for t in tasks] == [r["instance_id"] for r in csv_rows]
    for task, row in zip(tasks, csv_rows, strict=True):
        assert task.source.base_commit == row["base_commit"]
        assert task.source.git == f"https://github.com/{row['repo']}"
        assert task.repo == row["repo"]
        assert task.prompt == row["problem_statement"]
        assert task.patch == row["patch"] and task.test_patch == row["test_patch"]
        assert task.tests.fail_to_pass == json.loads(row["FAIL_TO_PASS"])
        assert task.tests.pass_to_pass == json.loads(row["PASS_TO_PASS"])
        assert task.image == "python" and task.metadata["environment"] == "swebench"
        assert task.metadata["version"] == row["version"]
        assert task.metadata["environment_setup_commit"] == row["environment_setup_commit"]
        assert task.metadata.get("hints_text", "") == row["hints_text"]


def test_lite_rows_without_tests_are_one_line_problems_not_tasks():
    rows = read_swebench_rows(str(LITE_JSONL))
    assert len(rows) == 274
    tasks, problems = import_swebench(rows, None)
    assert tasks == []
    assert problems == [f"{r['instance_id']}: no FAIL_TO_PASS tests; not importable as a task" for r in rows]


def test_round_trip_csv_import_export_equals_the_original(verified_rows, csv_rows, tmp_path):
    tasks, _ = import_swebench(verified_rows, None)
    exported = export_swebench(tasks)
    assert [list(r) for r in exported] == [list(SWEBENCH_COLUMNS)] * 50
    assert comparable(exported) == comparable(csv_rows)
    assert exported == csv_rows  # here even the JSON spelling of the test lists matches the hub's
    # ...and through a suite folder on disk, and a JSONL file.
    write_suite(tmp_path / "suite", "verified", "round trip", tasks)
    reloaded = load_suite(tmp_path / "suite")
    assert not reloaded.skipped
    by_id = {t.id: t for t in reloaded.tasks}
    again = export_swebench([by_id[t.id] for t in tasks])
    written = write_swebench(again, tmp_path / "rows.jsonl")
    assert comparable(read_swebench_rows(str(written))) == comparable(csv_rows)


def test_json_jsonl_csv_and_parquet_readers_agree(verified_rows, tmp_path):
    write_swebench(verified_rows, tmp_path / "rows.jsonl")
    write_swebench(verified_rows, tmp_path / "rows.json")
    pd.read_csv(VERIFIED_CSV, dtype=str, keep_default_na=False).to_parquet(tmp_path / "rows.parquet")
    for name in ("rows.jsonl", "rows.json", "rows.parquet"):
        assert read_swebench_rows(str(tmp_path / name)) == verified_rows, name


def test_parquet_keeps_lists_and_numbers_as_python_values(tmp_path):
    rows = read_swebench_rows(str(LITE_JSONL))
    pd.DataFrame(rows).to_parquet(tmp_path / "lite.parquet")
    assert read_swebench_rows(str(tmp_path / "lite.parquet")) == rows  # edit_functions lists, int counts


def test_null_values_are_left_out_of_rows(tmp_path):
    row = {"instance_id": "a__b-1", "repo": "a/b", "base_commit": "c0ffee", "patch": "", "problem_statement": "x"}
    pd.DataFrame([{**row, "hints_text": None}]).to_parquet(tmp_path / "rows.parquet")
    (tmp_path / "rows.jsonl").write_text(json.dumps({**row, "hints_text": None}) + "\n")
    assert read_swebench_rows(str(tmp_path / "rows.parquet")) == [row]
    assert read_swebench_rows(str(tmp_path / "rows.jsonl")) == [row]


def test_a_missing_column_is_one_line_naming_file_and_column(csv_rows, tmp_path):
    bad = tmp_path / "no_patch.csv"
    pd.DataFrame(csv_rows).drop(columns=["patch"]).to_csv(bad, index=False)
    with pytest.raises(EvalkitError) as caught:
        read_swebench_rows(str(bad))
    message = str(caught.value)
    assert "\n" not in message and str(bad) in message and "`patch`" in message

    rows = [dict(r) for r in csv_rows[:3]]
    del rows[1]["base_commit"]
    write_swebench(rows, tmp_path / "rows.jsonl")
    with pytest.raises(EvalkitError, match=r"row 2 has no `base_commit`") as caught:
        read_swebench_rows(str(tmp_path / "rows.jsonl"))
    assert "\n" not in str(caught.value)


def test_bad_files_are_one_line_errors(tmp_path):
    (tmp_path / "broken.jsonl").write_text('{"instance_id": "x"}\n{not json\n')
    (tmp_path / "rows.txt").write_text("")
    cases = {
        str(tmp_path / "broken.jsonl"): "broken.jsonl:2: not valid JSON",
        str(tmp_path / "rows.txt"): "unknown file type",
        str(tmp_path / "absent.csv"): "no such file",
        str(tmp_path): "is a folder",
    }
    for source, expected in cases.items():
        with pytest.raises(EvalkitError, match=expected) as caught:
            read_swebench_rows(source)
        assert "\n" not in str(caught.value)


@pytest.fixture
def hub_offline(monkeypatch):
    """Offline mode, as HF_HUB_OFFLINE=1 sets it (the libraries read the variable at import)."""
    import datasets.config
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)


def test_hub_name_offline_fails_fast_in_one_line(hub_offline):
    started = time.monotonic()
    with pytest.raises(EvalkitError) as caught:
        read_swebench_rows("evalkit-tests/no-such-dataset:dev")
    message = str(caught.value)
    assert time.monotonic() - started < 10
    assert "\n" not in message
    assert message.startswith("cannot load dataset evalkit-tests/no-such-dataset (split dev) from the Hugging Face hub")
    assert message.endswith("download it and pass the file")


def test_hub_name_without_network_fails_fast_in_one_line(monkeypatch):
    """Online mode with a hub that does not answer (a closed local port): the quick metadata
    request fails at once instead of the loader's ~25 s of retries."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "http://127.0.0.1:9")
    started = time.monotonic()
    with pytest.raises(EvalkitError, match=r"^cannot load dataset org/name \(split test\) from the Hugging Face hub"):
        read_swebench_rows("org/name")
    assert time.monotonic() - started < 10


def test_repo_dir_clones_are_used_when_present(verified_rows, tmp_path):
    (tmp_path / "django__django").mkdir()
    (tmp_path / "sympy").mkdir()
    tasks, problems = import_swebench(verified_rows, tmp_path)
    for task in tasks:
        if task.repo == "django/django":
            assert task.source.git == str(tmp_path / "django__django")
        elif task.repo == "sympy/sympy":
            assert task.source.git == str(tmp_path / "sympy")
        else:
            assert task.source.git == f"https://github.com/{task.repo}"
    others = sorted({t.repo for t in tasks} - {"django/django", "sympy/sympy"})
    assert [p.split(":")[0] for p in problems] == others  # one note per repo without a clone
    assert all("\n" not in p for p in problems)


def test_snapshot_tasks_export_with_an_empty_base_commit_and_a_note(demo_suite):
    rows = export_swebench(demo_suite.tasks)
    assert [r["base_commit"] for r in rows] == [""] * len(demo_suite.tasks)
    assert [json.loads(r["FAIL_TO_PASS"]) for r in rows] == [t.tests.fail_to_pass for t in demo_suite.tasks]
    notes = export_notes(demo_suite.tasks)
    assert len(notes) == len(demo_suite.tasks) and all("empty base_commit (--repo-dir DIR" in n for n in notes)


def test_a_snapshot_suite_round_trips_through_export_and_import_with_repo_dir(demo_suite, tmp_path):
    console, out, err_console, err = consoles()
    rows, repos = tmp_path / "rows.jsonl", tmp_path / "repos"
    assert export_command(DEMO_SUITE, "swebench", rows, console, err_console, repo_dir=repos) == 0
    assert sorted(p.name for p in repos.iterdir()) == ["kvstore", "ledger"]
    assert "import with `evalkit tasks import swebench FILE --out SUITE --repo-dir" in " ".join(err.getvalue().split())
    exported = [json.loads(line) for line in rows.read_text().splitlines()]
    assert all(len(row["base_commit"]) == 40 for row in exported)

    console, out, err_console, err = consoles()
    assert import_command(str(rows), tmp_path / "suite", repos, console, err_console) == 0
    assert err.getvalue() == ""
    imported = load_suite(tmp_path / "suite")
    assert not imported.skipped
    by_id = {task.id: task for task in imported.tasks}
    workspaces = {}
    for task in demo_suite.tasks:
        back = by_id[task.id]
        for field in ("prompt", "repo", "patch", "test_patch", "tests"):
            assert getattr(back, field) == getattr(task, field), (task.id, field)
        assert back.source.git == str((repos / task.repo).resolve())
        if task.repo not in workspaces:  # the imported workspace is the snapshot's, commit for commit
            workspaces[task.repo] = build_workspace(task.source).base_commit
        assert back.source.base_commit == workspaces[task.repo]
        assert build_workspace(back.source, repo_cache=tmp_path / "cache").base_commit == back.source.base_commit

    console, out, err_console, err = consoles()  # a second export adds nothing and names the same commits
    assert export_command(DEMO_SUITE, "swebench", tmp_path / "again.jsonl", console, err_console, repo_dir=repos) == 0
    assert (tmp_path / "again.jsonl").read_text() == rows.read_text()


def test_rows_of_a_snapshot_suite_exported_without_repo_dir_say_how_to_import_them(tmp_path):
    console, out, err_console, err = consoles()
    assert export_command(DEMO_SUITE, "swebench", tmp_path / "rows.jsonl", console, err_console) == 0
    console, out, err_console, err = consoles()
    assert import_command(str(tmp_path / "rows.jsonl"), tmp_path / "suite", None, console, err_console) == 1
    notes = err.getvalue().splitlines()
    assert notes[0] == (
        "note kvstore-auto-compact: empty base_commit (rows exported from a snapshot suite name their commits "
        "with `tasks export --repo-dir`); not importable as a task"
    )


def test_imported_problem_statements_over_the_prompt_limit_raise_the_suites_limit(verified_rows, tmp_path):
    rows = [{**verified_rows[0], "problem_statement": "x" * 25_000}, verified_rows[1]]
    write_swebench(rows, tmp_path / "rows.jsonl")
    console, out, err_console, err = consoles()
    assert import_command(str(tmp_path / "rows.jsonl"), tmp_path / "suite", None, console, err_console) == 0
    assert "1 problem statement longer than 20,000 characters (longest 25,000)" in err.getvalue()
    suite = load_suite(tmp_path / "suite")
    assert len(suite.tasks) == 2 and suite.max_prompt_chars == 25_000


def consoles() -> tuple[Console, io.StringIO, Console, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Console(file=out, width=200), out, Console(file=err, width=200), err


def test_import_then_export_commands(tmp_path, csv_rows):
    console, out, err_console, err = consoles()
    suite = tmp_path / "verified"
    assert import_command(str(VERIFIED_CSV), suite, None, console, err_console) == 0
    assert "wrote 50 tasks" in out.getvalue()
    assert len(load_suite(suite).tasks) == 50

    console, out, err_console, err = consoles()
    assert export_command(suite, "swebench", None, console, err_console) == 0
    lines = out.getvalue().splitlines()
    assert len(lines) == 50 and err.getvalue() == ""
    exported = {row["instance_id"]: row for row in map(json.loads, lines)}
    assert comparable([exported[r["instance_id"]] for r in csv_rows]) == comparable(csv_rows)

    console, out, err_console, err = consoles()
    assert export_command(suite, "swebench", tmp_path / "out.json", console, err_console) == 0
    assert len(json.loads((tmp_path / "out.json").read_text())) == 50

    with pytest.raises(EvalkitError, match="--format csv: unknown export format"):
        export_command(suite, "csv", None, console, err_console)
    with pytest.raises(EvalkitError, match="already exists; remove it or give another --out"):
        import_command(str(VERIFIED_CSV), suite, None, console, err_console)


def test_import_command_without_importable_rows_exits_1(tmp_path):
    console, out, err_console, err = consoles()
    assert import_command(str(LITE_JSONL), tmp_path / "lite", None, console, err_console) == 1
    lines = err.getvalue().splitlines()
    assert len(lines) == 275 and lines[-1].startswith("no task imported")
    assert not (tmp_path / "lite").exists()


def test_one_bad_row_is_one_line_and_the_import_goes_on(csv_rows, tmp_path):
    rows = [dict(r) for r in csv_rows[:4]]
    del rows[1]["base_commit"]
    rows[2]["FAIL_TO_PASS"] = {"not": "a list"}
    lines = [json.dumps(r) for r in rows]
    lines.insert(3, "{not json")
    source = tmp_path / "rows.jsonl"
    source.write_text("\n".join(lines) + "\n")
    out, err = Console(record=True, width=400), Console(record=True, width=400)
    assert import_command(str(source), tmp_path / "suite", None, out, err) == 0
    said = err.export_text()
    assert f"{source}:4: not valid JSON" in said and "row 2" in said and "has no `base_commit`" in said
    assert rows[2]["instance_id"] in said
    assert sorted(t.id for t in load_suite(tmp_path / "suite").tasks) == sorted(
        [rows[0]["instance_id"], rows[3]["instance_id"]]
    )
    wrote = out.export_text()
    assert "wrote 2 tasks" in wrote and "3 rows not imported" in wrote
