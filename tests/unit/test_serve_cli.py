"""`evalkit serve` is a real OpenAI-compatible endpoint other harnesses can point at."""

import signal
import subprocess

import openai
from conftest import DEMO_SUITE, EVALKIT
from processes import interruptible

from evalkit.agent.tools import TOOL_SCHEMAS


def test_serve_oracle_answers_the_sdk_and_stops_on_ctrl_c(demo_suite):
    proc = interruptible(
        [EVALKIT, "serve", "--policy", "oracle", "--suite", str(DEMO_SUITE), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        base_url = line.split(" at ")[1].split()[0]
        client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0)
        assert [m.id for m in client.models.list()] == ["oracle"]
        task = demo_suite.tasks[0]
        messages = [{"role": "user", "content": task.prompt}]
        reply = client.chat.completions.create(model="oracle", messages=messages, tools=TOOL_SCHEMAS)
        assert reply.choices[0].message.tool_calls[0].function.name in {"edit", "write_file"}
    finally:
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in stderr


def test_serve_replay_without_a_trajectory_is_one_line():
    result = subprocess.run([EVALKIT, "serve", "--policy", "replay"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "needs --trajectory" in result.stderr
