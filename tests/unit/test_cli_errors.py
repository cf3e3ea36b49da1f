"""User errors from the CLI are one line on stderr with exit code 2, never a traceback."""

import json
from functools import partial

from conftest import run_evalkit

from evalkit.agent.agent_table import AGENTS

evalkit = partial(run_evalkit, timeout=120)


def test_bad_suite_is_one_line_without_traceback(tmp_path):
    result = evalkit("tasks", "list", tmp_path / "missing")
    assert result.returncode == 2
    assert "no such suite" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_predictions_file_names_the_record_and_field(tmp_path):
    (tmp_path / "suite.jsonl").write_text("")
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps([{"model_patch": ""}]))
    result = evalkit("evaluate", preds, "--suite", tmp_path / "suite.jsonl")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unknown_task_id_is_named(tmp_path):
    from toy import write_toy_suite

    suite = write_toy_suite(tmp_path)
    result = evalkit("tasks", "validate", suite, "--task", "nope")
    assert result.returncode == 2 and "no task named nope" in result.stderr


def test_run_with_a_bad_model_config_names_file_and_field(tmp_path):
    from toy import write_toy_suite

    suite = write_toy_suite(tmp_path)
    config = tmp_path / "evalkit.toml"
    config.write_text('[models.mine]\nbase_url = "http://127.0.0.1:9/v1"\nretries = 3\n')
    result = evalkit("run", "--suite", suite, "--model", "mine", "--config", config, "--out", tmp_path / "runs")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{config}: [models.mine] unknown key `retries`" in result.stderr


def test_run_with_a_missing_trajectory_or_key_says_what_to_do(tmp_path, monkeypatch):
    from toy import write_toy_suite

    suite = write_toy_suite(tmp_path)
    result = evalkit("run", "--suite", suite, "--model", f"replay:{tmp_path / 'gone.jsonl'}", "--out", tmp_path)
    assert result.returncode == 2 and "no trajectory file or folder" in result.stderr
    monkeypatch.delenv("MISSING_KEY_VAR", raising=False)
    result = evalkit("run", "--suite", suite, "--model", "gpt-x", "--api-key-env", "MISSING_KEY_VAR", "--out", tmp_path)
    assert result.returncode == 2 and "MISSING_KEY_VAR is not set" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_gather_from_an_unreachable_url_or_a_plain_folder_is_one_line(tmp_path):
    result = evalkit("gather", "https://127.0.0.1:9/nope.git", "--out", tmp_path / "suite")
    assert result.returncode == 2 and "cannot clone" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    result = evalkit("gather", tmp_path, "--out", tmp_path / "suite")
    assert result.returncode == 2 and "not a git repository" in result.stderr


def test_a_refused_endpoint_stops_the_run_at_once_with_one_line_and_no_run_folder(tmp_path):
    import socket
    import time

    from toy import write_toy_suite

    suite = write_toy_suite(tmp_path)
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    started = time.monotonic()
    result = evalkit("run", "--suite", suite, "--model", "foo", "--base-url", url, "--out", tmp_path / "runs")
    took = time.monotonic() - started
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: model `foo` at {url}: connection refused; is the server running? (--no-preflight skips this check)"
    ]
    assert not (tmp_path / "runs").exists()
    assert took < 10, took  # a user-visible bound, generous for a loaded machine (the check itself: well under 1 s)


def test_retry_errors_needs_an_existing_run(tmp_path):
    from toy import write_toy_suite

    suite = write_toy_suite(tmp_path)
    result = evalkit("run", "--suite", suite, "--model", "null", "--retry-errors", "--out", tmp_path / "runs")
    assert result.returncode == 2 and "--retry-errors needs --run-id" in result.stderr
    result = evalkit("run", "--suite", suite, "-m", "null", "--retry-errors", "--run-id", "nope", "--out", tmp_path)
    assert result.returncode == 2 and "--retry-errors: no run `nope`" in result.stderr
    assert not (tmp_path / "nope").exists()


def test_an_unknown_agent_is_one_line_and_writes_no_run(tmp_path):
    result = evalkit("run", "--model", "oracle", "--agent", "nope", "--out", tmp_path, "--run-id", "a1")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == (
        f"error: unknown agent 'nope'; known agents: {', '.join(sorted(AGENTS))}, "
        "or command:TEMPLATE (a shell command run in the sandbox)"
    )
    assert not (tmp_path / "a1").exists()
    empty = evalkit("run", "--model", "oracle", "--agent", "command: ", "--out", tmp_path, "--run-id", "a1")
    assert empty.returncode == 2 and "Traceback" not in empty.stderr
    assert empty.stderr.strip() == (
        "error: --agent 'command: ': give a shell command after `command:`, e.g. 'command:my-agent --yes'"
    )
    assert not (tmp_path / "a1").exists()
