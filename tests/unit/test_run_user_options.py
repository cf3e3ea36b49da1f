"""`--user` and `--user-model`: recorded in run.json and kept by a resume (another value mixes two
experiments under one id, refused in one line); refused in one line with an agent that cannot ask;
a task may ask for a simulated user itself (`[user] mode`); the demo tasks carry the hidden intent."""

from functools import partial
from pathlib import Path

import pytest
from conftest import run_evalkit

from evalkit.agent.agent_table import make_agent
from evalkit.errors import EvalkitError
from evalkit.models.endpoint import resolve_model
from evalkit.runs.resume import resume_args, run_options
from evalkit.runs.settings import AttemptSettings, RunSettings
from evalkit.runs.store import RunManifest, RunOptions
from evalkit.runs.user_setup import UserSetup, user_channel
from evalkit.tasks.model import Limits, UserSpec

evalkit = partial(run_evalkit, timeout=120)
NOW = "2026-01-01T00:00:00+00:00"


def _manifest(**options) -> RunManifest:
    return RunManifest(run_id="r1", suite="demo", suite_path="tasks/demo", tasks=["a"],
                       models={"oracle": resolve_model("oracle", {}).public()}, samples=1, created_at=NOW,
                       updated_at=NOW, options=RunOptions(**options))  # fmt: skip


def _asked(**user) -> RunSettings:
    return RunSettings(attempt=AttemptSettings(user=UserSetup(**user)))


def test_a_resume_keeps_the_runs_user_and_refuses_another():
    args = resume_args(_asked(), {"run_id"}, _manifest(user="simulated", user_model="qwen"), Path("r1"))
    assert (args.attempt.user.mode, args.attempt.user.model) == ("simulated", "qwen")
    assert (run_options(args, ["a"]).user, run_options(args, ["a"]).user_model) == ("simulated", "qwen")
    old = resume_args(_asked(), {"run_id"}, _manifest(), Path("r1"))  # a run.json from before users
    assert (old.attempt.user.mode, old.attempt.user.model) == ("none", "oracle-user")
    with pytest.raises(EvalkitError, match=r"^--user simulated: run `r1` ran with none; use another --run-id$"):
        resume_args(_asked(mode="simulated"), {"run_id", "user"}, _manifest(), Path("r1"))
    with pytest.raises(EvalkitError, match=r"^--user-model qwen: run `r1` ran with oracle-user; use another"):
        resume_args(_asked(model="qwen"), {"run_id", "user_model"}, _manifest(), Path("r1"))


def test_agents_that_can_ask_get_a_user_and_a_task_may_ask_for_one(demo_suite):
    task = demo_suite.tasks[0]
    asking = task.model_copy(update={"user": UserSpec(mode="simulated")})
    spec = resolve_model("oracle", {})
    loop = make_agent("tool-loop", spec, client=None, output_limit=1000)
    simulator = UserSetup().simulator()
    assert user_channel(UserSetup(), simulator, loop, task, Limits()) is None
    assert user_channel(UserSetup(), simulator, loop, asking, Limits(max_questions=5)).max_questions == 5
    assert user_channel(UserSetup("simulated"), simulator, loop, task, Limits()) is not None

    command = make_agent("command:true", spec, client=None, output_limit=1000, proxy=object())
    assert user_channel(UserSetup("simulated"), simulator, command, task, Limits()) is not None  # via `ask-user`

    class WrittenBeforeUsers:  # no `asks_user`: never given a user
        pass

    assert user_channel(UserSetup("simulated"), simulator, WrittenBeforeUsers(), asking, Limits()) is None


def test_a_bad_user_mode_is_one_line_and_writes_no_run(tmp_path):
    bad = evalkit("run", "--model", "oracle", "--user", "maybe", "--out", tmp_path, "--run-id", "u1")
    assert bad.returncode == 2 and bad.stderr.strip() == "error: --user maybe: give none or simulated"
    assert not (tmp_path / "u1").exists()


def test_every_demo_task_says_its_intent_beyond_the_prompt(demo_suite):
    for task in demo_suite.tasks:
        intent = task.metadata.get("intent", "")
        assert 2 <= intent.count(". ") + 1 <= 5 and intent not in task.prompt, task.id
        assert "def " not in intent and "\n+" not in intent, task.id
