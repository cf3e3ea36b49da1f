"""`ask-user`, the command through which an agent in a sandbox (installed or `command:`) asks the
attempt's simulated user: the real script, run as a process, against the real model proxy over
HTTP. The question reaches the simulator on the host only under the attempt's own token, within
the question budget, and the exchange is a `user` event as in the tool loop; with nobody to ask,
an unknown token or an ended attempt, it says why in one line and exits 1."""

import os
import subprocess
import sys
import time

import pytest

from evalkit.bridge import AttemptChannel, ModelProxy
from evalkit.bridge.proxy import ASK_USER_ROUTE
from evalkit.models import ModelServer, NullPolicy
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec
from evalkit.records import StopReason
from evalkit.runs.user_setup import UserSetup
from evalkit.tasks.model import Limits
from evalkit.trajectory import TrajectoryWriter, read_trajectory
from evalkit.user.channel import NO_MORE_QUESTIONS, UserChannel
from evalkit.user.context import user_context

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "evalkit", "bridge", "ask_user_command.py")
TASK = "kvstore-crash-recovery"
INFORMATIVE = "What should happen to a torn last line when the store opens?"  # the intent says; the prompt does not


@pytest.fixture(scope="module")
def proxy():
    with ModelProxy() as running:
        yield running


@pytest.fixture(scope="module")
def null_client():
    with ModelServer({"null": NullPolicy()}) as server:
        spec = ModelSpec(name="null", model="null", builtin="null", max_retries=0)
        client = ChatClient(spec, base_url=server.base_url)
        yield client
        client.close()


@pytest.fixture
def channel(proxy, null_client, demo_suite, tmp_path):
    """An attempt on the proxy whose user is oracle-user with a budget of 2; its token and trajectory."""
    task = next(t for t in demo_suite.tasks if t.id == TASK)
    user = UserChannel(UserSetup().simulator(), user_context(task), max_questions=2)
    path = tmp_path / "t.jsonl"
    with TrajectoryWriter(path) as writer:
        channel = AttemptChannel(null_client, writer, Limits(), time.monotonic() + 60, user=user)
        token = proxy.register(channel)
        yield channel, token, path
        proxy.unregister(token)


def ask_user(proxy, token: str | None, *question: str, stdin: str = "") -> subprocess.CompletedProcess:
    host, port = proxy.address
    env = {"PATH": os.environ["PATH"], "EVALKIT_USER_URL": f"http://{host}:{port}/v1{ASK_USER_ROUTE}"}
    if token is not None:
        env["EVALKIT_USER_TOKEN"] = token
    return subprocess.run([sys.executable, SCRIPT, *question], input=stdin, capture_output=True, text=True,
                          env=env, timeout=60)  # fmt: skip


def test_a_question_is_answered_by_the_simulated_user_and_recorded(proxy, channel):
    attempt, token, path = channel
    result = ask_user(proxy, token, INFORMATIVE)
    assert result.returncode == 0, result.stderr
    assert "torn last line" in result.stdout and result.stderr == ""
    again = ask_user(proxy, token, stdin="When kv check finds corruption, what exit code?\n")  # from stdin
    assert again.returncode == 0 and "non-zero" in again.stdout
    over = ask_user(proxy, token, "And the file format?")
    assert (over.returncode, over.stdout.strip()) == (0, NO_MORE_QUESTIONS)
    user = attempt.user
    assert (user.questions, dict(user.classes)) == (3, {"informative": 1, "redundant": 1, "over_budget": 1})
    events = [e for e in read_trajectory(path) if e["type"] == "user"]
    assert [(e["via"], e["class"]) for e in events] == [
        ("ask-user", "informative"),
        ("ask-user", "redundant"),
        ("ask-user", "over_budget"),
    ]
    assert events[0]["question"] == INFORMATIVE and events[0]["answer"] == result.stdout.strip()
    assert attempt.requests == 0 and attempt.turns == 0  # a question is not a model request


def test_without_a_user_an_unknown_token_or_after_the_end_it_says_why_and_exits_1(proxy, channel, null_client):
    attempt, token, _ = channel
    stranger = ask_user(proxy, "evalkit-not-an-attempt", INFORMATIVE)
    assert (stranger.returncode, stranger.stdout) == (1, "")
    assert stranger.stderr.strip() == "ask-user: evalkit proxy: unknown API key"
    assert ask_user(proxy, None, INFORMATIVE).stderr.startswith("ask-user: nobody to ask in this attempt")
    assert ask_user(proxy, token).stderr.strip() == 'usage: ask-user "your question"'
    with TrajectoryWriter(attempt.trajectory.path.with_name("alone.jsonl")) as writer:
        alone = AttemptChannel(null_client, writer, Limits(), time.monotonic() + 60)  # no user
        alone_token = proxy.register(alone)
        nobody = ask_user(proxy, alone_token, INFORMATIVE)
        proxy.unregister(alone_token)
    assert nobody.returncode == 1 and "nobody answers questions in this attempt" in nobody.stderr
    attempt._end(StopReason.MAX_TURNS, "3 turns done, the budget is 3")
    ended = ask_user(proxy, token, INFORMATIVE)
    assert ended.returncode == 1 and "max_turns budget is spent" in ended.stderr
    assert attempt.user.questions == 0  # none of these reached the simulator
