"""`evalkit reviewer calibrate` end to end: the built-in scripted reviewer through evalkit's own
server and the real SDK, in review sandboxes on the real engine, over the calibration corpus of
the demo suite (its figures beside the quality axis's, the calibration resumable and attached to a
run's summary when that run is reviewed); and once with a real small model (SmolLM2-135M behind
llama.cpp's server), whose near-chance figures and failed reviews are the honest expected result:
recorded, never fatal."""

import json

import pytest
from conftest import DEMO_SUITE, run_evalkit

pytestmark = pytest.mark.integration

KINDS = "hack_markers,debug_print,dead_copy"


def test_the_scripted_reviewer_is_calibrated_and_the_calibration_resumes(docker_engine, tmp_path):
    out = tmp_path / "scripted.json"
    args = ("reviewer", "calibrate", "--reviewer", "scripted-reviewer", "--suite", DEMO_SUITE, "--tasks", "2",
            "--kinds", KINDS, "--out", out)  # fmt: skip
    result = run_evalkit(*args)
    assert result.returncode == 0, result.stderr[-3000:]
    calibration = json.loads(out.read_text())
    assert (calibration["tasks"], calibration["changes"], calibration["failed"]) == (2, 8, 0)
    reviewer = {k["kind"]: k for k in calibration["kinds"]}
    axis = {k["kind"]: k for k in calibration["axis_kinds"]}
    assert list(reviewer) == ["dead_copy", "hack_markers", "debug_print"]
    assert reviewer["hack_markers"]["caught"] == 1.0 and reviewer["hack_markers"]["auc"] == 1.0
    assert reviewer["dead_copy"]["lower"] == 0.0  # the checklist reads the diff's lines, not its structure
    assert all(axis[k]["caught"] == 1.0 for k in axis) and calibration["reference_median"] == 1.0
    assert calibration["agreement_pairs"] == 6 and calibration["agreement"] == pytest.approx(4 / 6)
    assert calibration["cost_usd"] == 0.0 and calibration["prompt_tokens"] > 0
    assert "hack_markers" in result.stdout and "agreement with the quality axis" in result.stdout
    reviews = out.with_name("scripted.reviews.jsonl")
    made = reviews.read_text()
    assert len(made.splitlines()) == 8 and len(list(out.with_name("scripted.transcripts").iterdir())) == 8
    again = run_evalkit(*args)  # every review is on record: none is made again
    assert again.returncode == 0 and reviews.read_text() == made
    assert json.loads(out.read_text())["kinds"] == calibration["kinds"]


def test_bad_input_is_one_line(tmp_path):
    unknown = run_evalkit("reviewer", "calibrate", "--reviewer", "scripted-reviewer", "--suite", DEMO_SUITE,
                          "--kinds", "sloppy_typing", "--out", tmp_path / "x.json")  # fmt: skip
    assert unknown.returncode == 2 and "--kinds sloppy_typing: unknown kind" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    builtin = run_evalkit("reviewer", "calibrate", "--reviewer", "oracle", "--suite", DEMO_SUITE)
    assert builtin.returncode == 2 and "cannot review code" in builtin.stderr


def test_a_small_real_model_is_calibrated_and_its_failures_are_recorded(
    llama_server, docker_engine, toy_suite_dir, tmp_path
):
    config = tmp_path / "evalkit.toml"
    config.write_text(
        f'[models.smollm2]\nmodel = "smollm2"\nbase_url = "{llama_server}"\ntool_choice = "auto"\n'
        "request_timeout_s = 180\nmax_retries = 1\nmax_tokens = 256\ntemperature = 0.0\nseed = 1\n"
    )
    out = tmp_path / "smollm2.json"
    result = run_evalkit("reviewer", "calibrate", "--reviewer", "smollm2", "--suite", toy_suite_dir,
                         "--config", config, "--kinds", "hack_markers,debug_print", "--max-review-turns", "3",
                         "--out", out, timeout=1500)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    print(result.stdout)
    calibration = json.loads(out.read_text())
    assert calibration["changes"] == 3 and calibration["reviewer"] == "smollm2"
    assert calibration["prompt_tokens"] > 0 and calibration["completion_tokens"] > 0
    rows = [json.loads(line) for line in out.with_name("smollm2.reviews.jsonl").read_text().splitlines()]
    for row in rows:  # a usable verdict, or the reason there is none: never both, never neither
        verdict = row["verdict"]
        assert (verdict["score"] is None) == bool(verdict["error"]), verdict
        assert verdict["turns"] >= 1
        assert (out.with_name("smollm2.transcripts") / f"{row['task_id']}__{row['change']}.jsonl").is_file()
    assert calibration["failed"] == sum(r["verdict"]["score"] is None for r in rows)
    for figures in calibration["kinds"]:
        assert figures["pairs"] <= 1 and (figures["auc"] is None or 0.0 <= figures["auc"] <= 1.0)
