"""`evalkit run --run-id X` alone runs again what run.json records; options given with it extend
the run or must agree with the record."""

from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.models.endpoint import ModelSpec, Sampling, resolve_model
from evalkit.runs.folders import resume_command
from evalkit.runs.limits import LimitOverrides
from evalkit.runs.orchestrate import open_run
from evalkit.runs.resume import model_specs, resume_args, run_options
from evalkit.runs.settings import (
    AttemptSettings,
    ExecutorSettings,
    ModelChoice,
    RunSettings,
    SandboxSettings,
    TaskChoice,
)
from evalkit.runs.store import RunManifest, RunOptions, RunStore
from evalkit.tasks import SkippedTask, Suite

RUN_DIR = Path("reports/runs/r1")
NOW = "2026-01-01T00:00:00+00:00"


def qwen(**changes) -> ModelSpec:
    spec = ModelSpec(name="qwen", model="qwen2.5-coder", base_url="http://127.0.0.1:8000/v1", api_key_env="QWEN_KEY",
                     sampling=Sampling(temperature=0.0))  # fmt: skip
    return spec.model_copy(update=changes)


def manifest(suite_path: Path, **options) -> RunManifest:
    models = {"oracle": resolve_model("oracle", {}).public(), "qwen": qwen().public()}
    return RunManifest(run_id="r1", suite="toy", suite_path=str(suite_path), tasks=["a", "b", "c"], models=models,
                       samples=3, created_at=NOW, updated_at=NOW, options=RunOptions(**options))  # fmt: skip


def asked(models=(), *, tasks=None, attempt=None, sandbox=None, executor=None, retry_errors=False) -> RunSettings:
    """What the command line asks (each group given as a dict of the fields typed)."""
    return RunSettings(
        tasks=TaskChoice(**(tasks or {})),
        models=ModelChoice(names=list(models)),
        attempt=AttemptSettings(**(attempt or {})),
        sandbox=SandboxSettings(**(sandbox or {})),
        executor=ExecutorSettings(**(executor or {})),
        retry_errors=retry_errors,
    )


def budgets(**limits) -> dict:
    return {"attempt": {"limits": LimitOverrides(**limits)}}


def test_a_new_run_needs_a_model():
    assert resume_args(asked(["null"]), {"model"}, None, RUN_DIR).models.names == ["null"]
    with pytest.raises(EvalkitError, match=r"^--model: name a model to run"):
        resume_args(asked(), set(), None, RUN_DIR)
    with pytest.raises(EvalkitError, match=r"^--run-id r1: no run to resume in reports/runs/r1; name a --model"):
        resume_args(asked(), {"run_id"}, None, RUN_DIR)


def test_a_run_id_alone_runs_what_run_json_records(tmp_path):
    record = manifest(tmp_path, task_ids=["a", "c"], limits={"max_turns": 5, "wall_time_s": 60.0}, config="my.toml")
    args = resume_args(asked(), {"run_id"}, record, RUN_DIR)
    chosen = args.tasks
    assert (chosen.suite, args.models.names, chosen.samples, chosen.task_ids, chosen.limit) == (
        tmp_path, ["oracle", "qwen"], 3, ["a", "c"], None)  # fmt: skip
    assert args.attempt.limits == LimitOverrides(max_turns=5, wall_time_s=60.0)
    assert args.models.config == Path("my.toml")
    specs = model_specs(args, record, resolve=lambda name: pytest.fail("recorded models are not resolved again"))
    assert [s.public() for s in specs] == [record.models["oracle"], record.models["qwen"]]
    assert specs[1].api_key_env == "QWEN_KEY" and specs[1].sampling.temperature == 0.0


def test_options_given_extend_the_run_or_win(tmp_path):
    record = manifest(tmp_path, task_ids=["a"])
    more = asked(["qwen"], tasks={"samples": 5, "limit": 2})
    args = resume_args(more, {"model", "samples", "limit"}, record, RUN_DIR)
    assert (args.models.names, args.tasks.samples, args.tasks.task_ids, args.tasks.limit) == (["qwen"], 5, None, 2)
    assert run_options(args, ["a", "b"]).task_ids == ["a", "b"]
    assert run_options(resume_args(asked(), set(), record, RUN_DIR), ["a"]).task_ids == ["a"]
    assert run_options(asked(["null"]), ["a", "b", "c"]).task_ids is None  # all tasks: none chosen


@pytest.mark.parametrize(
    ("changes", "given", "message"),
    [
        ({"models": ["gpt-x"]}, {"model"}, r"^--model gpt-x: run `r1` has oracle, qwen; .* or use another --run-id$"),
        ({}, {"temperature"}, r"^--temperature: run `r1` is resumed with its models as recorded; give --model too"),
        ({}, {"base_url"}, r"^--base-url: "),
        (budgets(max_turns=9), {"max_turns"}, r"^--max-turns 9: run `r1` ran with 5; "),
        (budgets(max_tokens=9), {"max_tokens"}, r"^--max-tokens 9: run `r1` ran with the tasks'"),
        ({"attempt": {"agent": "other"}}, {"agent"}, r"^--agent other: run `r1` ran with agent tool-loop; use another"),
    ],
)
def test_options_that_disagree_with_the_record_are_one_line_naming_the_option(tmp_path, changes, given, message):
    with pytest.raises(EvalkitError, match=message):
        resume_args(asked(**changes), given, manifest(tmp_path, limits={"max_turns": 5}), RUN_DIR)


def test_a_model_given_again_must_be_the_same_but_for_its_transport(tmp_path):
    record = manifest(tmp_path)
    args = resume_args(asked(["qwen"]), {"model"}, record, RUN_DIR)
    same = qwen(max_connections=2, request_timeout_s=30, max_retries=1, stream=True)
    assert model_specs(args, record, resolve=lambda name: same) == [same]
    with pytest.raises(EvalkitError, match=r"^--model qwen: `temperature` is 0.7 now, 0.0 in run `r1`; resume with"):
        model_specs(args, record, resolve=lambda name: qwen(sampling=Sampling(temperature=0.7)))
    with pytest.raises(EvalkitError, match=r"^--model qwen: `base_url` is 'http://other/v1' now"):
        model_specs(args, record, resolve=lambda name: qwen(base_url="http://other/v1"))
    older = {k: v for k, v in qwen().public().items() if k not in ("on_text", "max_nudges", "tool_call_format")}
    recorded = manifest(tmp_path).model_copy(update={"models": {"qwen": older}})
    older_run = resume_args(asked(["qwen"]), {"model"}, recorded, RUN_DIR)
    assert model_specs(older_run, recorded, lambda name: qwen()) == [qwen()]  # fields added since: their defaults


def test_a_run_whose_suite_moved_says_to_give_suite(tmp_path):
    with pytest.raises(EvalkitError, match=r"its suite .*gone is gone; give --suite"):
        resume_args(asked(), set(), manifest(tmp_path / "gone"), RUN_DIR)
    moved = resume_args(asked(tasks={"suite": tmp_path}), {"suite"}, manifest(tmp_path / "gone"), RUN_DIR)
    assert moved.tasks.suite == tmp_path


def test_a_run_from_before_budgets_were_recorded_takes_the_budgets_given(tmp_path):
    old = RunManifest.model_validate_json(manifest(tmp_path).model_dump_json(exclude={"options"}))
    args = resume_args(asked(attempt={"limits": LimitOverrides(max_turns=7)}), {"max_turns"}, old, RUN_DIR)
    assert args.attempt.limits == LimitOverrides(max_turns=7) and args.tasks.task_ids is None


def test_the_resume_command_is_one_that_works():
    assert resume_command("r1", Path("reports/runs")) == "evalkit run --run-id r1"
    assert resume_command("r1", Path("/tmp/my runs")) == "evalkit run --run-id r1 --out '/tmp/my runs'"
    retry = resume_command("r1", Path("/tmp/x"), "--retry-errors")
    assert retry == "evalkit run --run-id r1 --retry-errors --out /tmp/x"


def test_skip_invalid_is_recorded_and_carried_by_a_resume(tmp_path):
    """A run started with --skip-invalid resumes by its id alone, whose suite still has a bad task."""
    started = asked(["null"], tasks={"skip_invalid": True})
    assert run_options(started, ["a"]).skip_invalid is True
    assert resume_args(asked(), {"run_id"}, manifest(tmp_path, skip_invalid=True), RUN_DIR).tasks.skip_invalid
    assert not resume_args(asked(), {"run_id"}, manifest(tmp_path), RUN_DIR).tasks.skip_invalid
    skipped = [SkippedTask(task="d", file="d/task.toml", reason="unknown key")]
    before_options = manifest(tmp_path).model_copy(update={"skipped_tasks": skipped})
    assert resume_args(asked(), {"run_id"}, before_options, RUN_DIR).tasks.skip_invalid  # it skipped, so it was asked


def test_retry_errors_lets_a_model_move_its_endpoint_and_nothing_else(tmp_path):
    moved = qwen(base_url="http://127.0.0.1:9000/v1", api_key_env="OTHER_KEY")
    args = resume_args(asked(["qwen"], retry_errors=True), {"model", "retry_errors"}, manifest(tmp_path), RUN_DIR)
    assert model_specs(args, manifest(tmp_path), resolve=lambda name: moved) == [moved]
    with pytest.raises(EvalkitError, match=r"^--model qwen: `temperature` is 0.7 now, 0.0 in run `r1`"):
        model_specs(
            args, manifest(tmp_path), lambda name: moved.model_copy(update={"sampling": Sampling(temperature=0.7)})
        )
    plain = resume_args(asked(["qwen"]), {"model"}, manifest(tmp_path), RUN_DIR)
    hint = r"`api_key_env` .*same settings \(with --retry-errors the endpoint may move\)"
    with pytest.raises(EvalkitError, match=hint):
        model_specs(plain, manifest(tmp_path), resolve=lambda name: moved)


def test_reopening_a_run_keeps_every_task_chosen_and_refuses_another_suite(tmp_path, toy_task):
    suite = Suite("toy", tmp_path, [toy_task.model_copy(update={"id": i}) for i in "abc"])
    store = RunStore(tmp_path / "r1")
    spec = resolve_model("null", {})
    for chosen, expected in ((["c"], ["c"]), (["a"], ["a", "c"]), (None, None), (["b"], None)):
        open_run(store, "r1", suite, tmp_path, [spec], 1, RunOptions(task_ids=chosen))
        assert store.read_manifest().options.task_ids == expected
    with pytest.raises(
        EvalkitError, match=r"^--suite .*: run `r1` is of suite `toy`, not `other`; use another --run-id"
    ):
        open_run(store, "r1", Suite("other", tmp_path, suite.tasks), tmp_path, [spec], 1)


def test_the_agent_is_recorded_and_a_run_id_alone_resumes_with_it(tmp_path):
    assert run_options(asked(["null"], attempt={"agent": "tool-loop"}), ["a"]).agent == "tool-loop"
    record = manifest(tmp_path, agent="tool-loop")
    assert resume_args(asked(), {"run_id"}, record, RUN_DIR).attempt.agent == "tool-loop"


def test_the_backend_is_recorded_and_reused_unless_another_is_given(tmp_path):
    assert run_options(asked(["null"], sandbox={"backend": "docker"}), ["a"]).backend == "docker"
    record = manifest(tmp_path, backend="elsewhere")
    assert resume_args(asked(), {"run_id"}, record, RUN_DIR).sandbox.backend == "elsewhere"
    docker = resume_args(asked(sandbox={"backend": "docker"}), {"run_id", "backend_name"}, record, RUN_DIR)
    assert docker.sandbox.backend == "docker"


def test_the_executor_and_its_address_are_recorded_and_a_run_id_alone_resumes_on_them(tmp_path):
    options = run_options(asked(["null"], executor={"name": "ray", "ray_address": "10.0.0.5:6379"}), ["a"])
    assert (options.executor, options.ray_address) == ("ray", "10.0.0.5:6379")
    record = manifest(tmp_path, executor="ray", ray_address="10.0.0.5:6379")
    args = resume_args(asked(), {"run_id"}, record, RUN_DIR)
    assert (args.executor.name, args.executor.ray_address) == ("ray", "10.0.0.5:6379")
    here = resume_args(asked(executor={"name": "local"}), {"run_id", "executor_name"}, record, RUN_DIR)
    assert (here.executor.name, here.executor.ray_address) == ("local", None)  # finishing a cluster run on this machine
