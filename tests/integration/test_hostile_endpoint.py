"""`evalkit run` against an OpenAI-compatible server it has never seen, which returns errors,
hangs, floods, malformed and unknown tool calls and probes the sandbox: every attempt finishes
with the faults recorded, the host is untouched and no container is left."""

import json
import secrets
from pathlib import Path

import pytest
from conftest import run_evalkit
from hostile_server import HostileServer, turn
from toy import BASE_FILES, POWER

from evalkit.sandbox.docker.containers import LABEL_RUN

pytestmark = pytest.mark.integration

HOST_PROBE = Path(f"/tmp/evalkit-host-probe-{secrets.token_hex(4)}")
NETWORK_PROBE = "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)\""
SOLUTION = BASE_FILES["calc/__init__.py"] + POWER
SUBMIT_SUMMARY = {"summary": "Added power() to calc/__init__.py."}
WRITE_SOLUTION = {"path": "calc/__init__.py", "content": SOLUTION}
TEXT_CALL = "I will do it now.\n<tool_call>\n{}\n</tool_call>"
SCENARIOS = {
    "chaos": [
        [
            {"status": 500},
            {"status": 429, "headers": {"Retry-After": "1"}},
            turn(
                ("bash", "{'command': 'ls'"),
                ("rm_rf", {"path": "/"}),
                ("bash", {}),
                ("bash", {"command": 5}),
            ),
        ],
        [turn(("bash", {"command": "yes evalkit | head -c 3000000"}), ("bash", {"command": "sleep 600"}))],
        [
            turn(
                ("bash", {"command": "cat /etc/shadow"}),
                ("bash", {"command": "echo pwned >> /etc/passwd"}),
                ("bash", {"command": NETWORK_PROBE}),
                ("bash", {"command": "kill -9 1"}),
                ("bash", {"command": f"touch {HOST_PROBE} && echo touched"}),
                ("write_file", {"path": "/etc/evil", "content": "x"}),
            )
        ],
        [
            turn(
                ("edit", {"path": "calc/__init__.py", "old_string": "def nope", "new_string": "x"}),
                ("read_file", {"path": "calc/__init__.py"}),
            )
        ],
        [turn(("write_file", {"path": "calc/__init__.py", "content": SOLUTION}))],
        [turn(("submit", {"summary": "Added power() to calc/__init__.py."}))],
    ],
    "hang": [[{"hang": 60}]],
    "overflow": [[{"status": 400, "body": {"error": {"message": "maximum context length is 4096 tokens"}}}]],
    "flood": [[{"flood": 40_000_000}]],
    "spin": [[turn(("bash", {"command": "true"}))]],
    "linger": [[turn(("bash", {"command": "sleep 1000 >/dev/null 2>&1 &"}))], [turn(("bash", {"command": "sleep 5"}))]],
    "silent": [[turn(content="I believe it already works.")]],
    # thinks aloud first, as small open models do, then works once reminded
    "thinker": [
        [turn(content="First I should understand the code, then add power().", reasoning="The user wants power.")],
        [turn(("write_file", {"path": "calc/__init__.py", "content": SOLUTION}))],
        [turn(("submit", {"summary": "Added power() to calc/__init__.py."}))],
    ],
    # writes its tool calls into the text (tool_call_format = "text")
    "texter": [
        [turn(content=TEXT_CALL.format(json.dumps({"name": "write_file", "arguments": WRITE_SOLUTION})))],
        [turn(content=TEXT_CALL.format(json.dumps({"name": "submit", "arguments": SUBMIT_SUMMARY})))],
    ],
    "wordy": [[turn(("bash", {"command": "ls"}), usage={"prompt_tokens": 3_000_000, "completion_tokens": 5})]],
}


@pytest.fixture(scope="module")
def hostile_run(toy_suite_dir, docker_engine, tmp_path_factory):
    out = tmp_path_factory.mktemp("hostile-runs")
    config = out / "evalkit.toml"
    with HostileServer(SCENARIOS, models=["hostile"]) as server:
        config.write_text(
            "".join(
                f'[models.{name}]\nmodel = "hostile"\nbase_url = "{server.url(name)}"\n'
                "request_timeout_s = 2\nmax_retries = 2\nretry_base_s = 0.05\n"
                + ('tool_call_format = "text"\n' if name == "texter" else "")
                for name in SCENARIOS
            )
        )
        models = [arg for name in SCENARIOS for arg in ("--model", name)]
        result = run_evalkit(
            "run", "--suite", toy_suite_dir, *models, "--config", config, "--run-id", "hostile", "--out", out,
            "--concurrency", "4", "--max-turns", "12", "--wall-time", "25", "--command-timeout", "3",
        )  # fmt: skip
    rows = [json.loads(line) for line in (out / "hostile" / "results.jsonl").read_text().splitlines()]
    yield result, {r["model"]: r for r in rows}, out / "hostile", server


def tool_messages(run_dir: Path, model: str) -> list[str]:
    path = run_dir / "trajectories" / f"calc-power__{model}__0.jsonl"
    events = [json.loads(line) for line in path.read_text().splitlines()]
    return [e["message"]["content"] for e in events if e["type"] == "message" and e["message"]["role"] == "tool"]


def test_every_attempt_finishes_with_its_stop_reason(hostile_run):
    result, rows, _, _ = hostile_run
    assert result.returncode == 3, result.stderr[-3000:]  # the run finished; some attempts errored
    assert "2 errors: endpoint_error ×2 — not scored" in result.stdout
    stops = {model: row["stop_reason"] for model, row in rows.items()}
    assert stops == {
        "chaos": "submitted",
        "hang": "endpoint_error",
        "overflow": "context_overflow",
        "flood": "endpoint_error",
        "spin": "max_turns",
        "linger": "wall_time",
        "silent": "no_tool_call",
        "thinker": "submitted",
        "texter": "submitted",
        "wordy": "max_tokens",
    }
    assert rows["spin"]["turns"] == 12 and rows["wordy"]["turns"] == 1
    assert rows["silent"]["final_message"] == "I believe it already works."


def test_plain_text_turns_are_nudged_and_counted(hostile_run):
    _, rows, run_dir, _ = hostile_run
    assert rows["silent"]["turns"] == 4 and rows["silent"]["faults"] == {"no_tool_call": 3}  # 3 reminders, a stop
    assert rows["thinker"]["resolved"] and rows["thinker"]["faults"] == {"no_tool_call": 1}
    assert rows["texter"]["resolved"] and rows["texter"]["faults"] == {"text_tool_call": 2}
    lines = (run_dir / "scores.jsonl").read_text().splitlines()
    scores = {row["model"]: row for row in map(json.loads, lines)}
    assert scores["thinker"]["interaction"]["counts"]["no_tool_call"] == 1
    events = [json.loads(line) for line in (run_dir / "trajectories" / "calc-power__thinker__0.jsonl").open()]
    assert next(e for e in events if e["type"] == "model_call")["reasoning"] == "The user wants power."
    sent = [e["message"] for e in events if e["type"] == "message" and e["message"]["role"] == "assistant"]
    assert all(set(m) <= {"role", "content", "tool_calls"} and isinstance(m["content"], str) for m in sent)
    assert scores["thinker"]["interaction"]["score"] < scores["texter"]["interaction"]["score"]
    assert 25 <= rows["linger"]["agent_s"] < 40


def test_faults_and_retries_are_counted_and_the_probes_are_flagged(hostile_run):
    _, rows, _, _ = hostile_run
    chaos = rows["chaos"]
    assert chaos["tests_resolved"] and chaos["error"] is None  # the change itself is right...
    kinds = {flag["kind"] for flag in chaos["integrity"]["flags"]}
    assert {"network_probe", "harness_tampering", "outside_workspace"} <= kinds  # ...but it probed
    assert chaos["integrity"]["verdict"] == "fail" and not chaos["resolved"]
    assert chaos["faults"] == {
        "malformed_json": 1,
        "unknown_tool": 1,
        "bad_arguments": 2,
        "timeout": 1,
        "tool_error": 2,  # the edit of an absent string, the write to /etc
    }
    assert chaos["retries"] == {"server_error": 1, "rate_limit": 1}
    assert rows["hang"]["retries"] == {"timeout": 3} and "gave up after 3" in rows["hang"]["error"]
    assert rows["flood"]["retries"] == {"bad_response": 3}
    assert rows["linger"]["faults"]["timeout"] >= 5


def test_floods_are_truncated_and_probes_stay_in_the_sandbox(hostile_run):
    _, _, run_dir, _ = hostile_run
    flood, hung, shadow, passwd, network, pid1, touched, etc = tool_messages(run_dir, "chaos")[4:12]
    assert "evalkit truncated" in flood and len(flood) < 140_000
    assert "timed out after 3s" in hung
    assert "Permission denied" in shadow and "Permission denied" in passwd
    assert "[exit code 0]" not in network and ("unreachable" in network or "Errno" in network)
    assert "[exit code 0]" not in pid1
    assert "touched" in touched and not HOST_PROBE.exists()  # its /tmp, not the host's
    assert etc.startswith("Error: cannot write /etc/evil")


def test_no_container_is_left(hostile_run, docker_engine):
    assert docker_engine.containers.list(all=True, filters={"label": f"{LABEL_RUN}=hostile"}) == []


def test_the_summary_shows_every_model_and_an_unpriced_model_warns_once(hostile_run):
    result, _, run_dir, _ = hostile_run
    for model in SCENARIOS:
        assert model in result.stdout
    assert result.stderr.count("no price for model `hostile`") == 1
    costs = [json.loads(line)["efficiency"]["cost_usd"] for line in (run_dir / "scores.jsonl").read_text().splitlines()]
    assert costs == [None] * len(SCENARIOS)
