"""Real SWE-bench Verified instances evaluate offline, as a SWE-bench user would try them: rows
imported with `--repo-dir` (the shared sphinx mirror, unpacked here), three instances of three
versions (3.2, 5.0, 7.2: Python 3.9 on bullseye, 7.2 with graphviz from Debian) validated in their
per-version environment (gold resolves, empty does not), `evaluate` of the gold predictions
agreeing with SWE-bench (resolved), and the django rows, whose repository is not here, one line
each. Builds the bullseye base and the three environment images when missing (minutes, once)."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest
from conftest import ROOT, run_evalkit

pytestmark = pytest.mark.integration

ROWS = ROOT / "tests" / "data" / "swebench" / "verified_mini_sphinx.jsonl"
TARBALL = "sphinx-doc__sphinx.git.tar.gz"
CHOSEN = ("sphinx-doc__sphinx-8035", "sphinx-doc__sphinx-10466", "sphinx-doc__sphinx-11510")  # 3.2, 5.0, 7.2
DJANGO = ("django__django-11790", "django__django-11815")


def shared_repos() -> Path:
    """The folder holding the sphinx mirror: EVALKIT_SWEBENCH_REPOS, else the shared data folder."""
    candidates = [Path(p) for p in [os.environ.get("EVALKIT_SWEBENCH_REPOS", "")] if p] + [
        ROOT.parent / "shared" / "data" / "swebench" / "repos",
        Path("/work/shared/data/swebench/repos"),
    ]
    for folder in candidates:
        if (folder / TARBALL).is_file():
            return folder
    pytest.fail(f"{TARBALL} not found in {', '.join(map(str, candidates))}: set EVALKIT_SWEBENCH_REPOS")


@pytest.fixture(scope="module")
def suite(tmp_path_factory, docker_engine) -> Path:
    work = tmp_path_factory.mktemp("swebench")
    repos = work / "repos"
    with tarfile.open(shared_repos() / TARBALL) as tar:
        tar.extractall(repos, filter="data")
    out = work / "suite"
    imported = run_evalkit("tasks", "import", "swebench", ROWS, "--out", out, "--repo-dir", repos)
    assert imported.returncode == 0, imported.stderr
    assert "wrote 27 tasks" in imported.stdout
    assert "django/django: no clone at" in imported.stderr  # said once, at import
    return out


def test_three_sphinx_versions_validate_in_their_own_environments(suite, tmp_path):
    rows_file = tmp_path / "health.json"
    args = [arg for task in CHOSEN for arg in ("--task", task)]
    result = run_evalkit("tasks", "validate", suite, *args, "--runs", "1", "--concurrency", "1", "--json", rows_file,
                         timeout=3000)
    rows = {row["task_id"]: row for row in json.loads(rows_file.read_text())}
    for task in CHOSEN:
        row = rows[task]
        assert row["gold_resolved"] and not row["empty_resolved"], (task, row["problems"], result.stderr[-2000:])
        assert row["valid"], (task, row["problems"])


def test_gold_predictions_evaluate_as_swebench_says_and_django_says_why_in_one_line(suite, tmp_path):
    rows = {json.loads(line)["instance_id"]: json.loads(line) for line in ROWS.read_text().splitlines()}
    predictions = tmp_path / "gold.jsonl"
    chosen = (*CHOSEN, *DJANGO)
    predictions.write_text("".join(
        json.dumps({"instance_id": i, "model_name_or_path": "gold", "model_patch": rows[i]["patch"]}) + "\n"
        for i in chosen
    ))
    result = run_evalkit("evaluate", predictions, "--suite", suite, "--run-id", "gold", "--out", tmp_path / "ev",
                         timeout=3000)
    assert result.returncode == 0, result.stderr[-2000:]
    for instance in CHOSEN:  # all resolved in SWE-bench Verified: its gold patches are the reference
        report = json.loads((tmp_path / "ev/gold/gold" / instance / "report.json").read_text())[instance]
        assert report["resolved"], (instance, report.get("error"))
    for instance in DJANGO:
        report = json.loads((tmp_path / "ev/gold/gold" / instance / "report.json").read_text())[instance]
        assert not report["resolved"] and "django/django: cannot clone" in (report.get("error") or ""), report
        assert "\n" not in report["error"]
