"""The run folder as a type: RunPaths names the files every reader and writer uses, one test says
whether a folder is a run, and score_run returns the summary it wrote (the CLI shows that object,
so it must be what summary.json holds)."""

import json

import pytest
from toy import one_attempt_run

from evalkit.errors import EvalkitError
from evalkit.runs.folders import run_folder
from evalkit.runs.paths import RunPaths, is_run_folder
from evalkit.scoring.attempt_scores import ScoringSettings
from evalkit.scoring.run_scores import load_scores, score_run


def test_the_files_a_run_writes_are_where_run_paths_says(toy_task, tmp_path):
    store = one_attempt_run(toy_task, tmp_path / "suite", tmp_path / "runs" / "r1")
    scored = score_run(store, {toy_task.id: toy_task}, ScoringSettings())

    paths = RunPaths(store.dir)
    assert {p.name for p in store.dir.iterdir()} == {
        p.name for p in (paths.manifest, paths.results, paths.scores, paths.summary, paths.trajectories)
    }
    assert json.loads(paths.summary.read_text()) == scored.summary.model_dump(mode="json")
    assert scored.summary.run_id == "r1" and scored.summary.models[0]["model"] == "null"
    assert [s.key for s in scored.scores] == [s.key for s in load_scores(store)]


def test_a_folder_is_a_run_by_its_manifest_or_its_results(tmp_path):
    empty, manifest_only, results_only = (tmp_path / name for name in ("empty", "manifest", "results"))
    for folder in (empty, manifest_only, results_only):
        folder.mkdir()
    RunPaths(manifest_only).manifest.write_text("{}")
    RunPaths(results_only).results.write_text("")
    assert [is_run_folder(f) for f in (empty, manifest_only, results_only)] == [False, True, True]
    assert not is_run_folder(tmp_path / "missing")
    # a folder that is a run wins over a run id of the same name under the runs root
    (tmp_path / "root" / "results").mkdir(parents=True)
    assert run_folder(results_only, tmp_path / "root") == results_only


def test_the_refusals_name_the_folder_and_the_missing_file(tmp_path):
    with pytest.raises(EvalkitError, match=r"^.*/x: not an evalkit run folder \(no run\.json\)$"):
        RunPaths(tmp_path / "x").require_manifest()
    with pytest.raises(EvalkitError, match=r"^given: no results\.jsonl; is this an evalkit run folder\?$"):
        RunPaths(tmp_path / "x").require_results("given")
