"""What travels to a cluster node with each attempt: picklable, without a key, and enough for a
node that has neither the suite folder nor the repository (the workspace archive and the task's
recipe folder, unpacked on the node under its content hash so the image tag is the same); and a
driver packs it without a Docker engine."""

import pickle

import openai
import pytest

from evalkit.cli.common import _open_backend
from evalkit.errors import SandboxError
from evalkit.models import ModelServer, NullPolicy
from evalkit.models.endpoint import ModelSpec
from evalkit.runs.limits import LimitOverrides
from evalkit.runs.node_attempt import BuiltinEndpoint, NodeAttempt, NodeJob
from evalkit.runs.settings import AttemptSettings
from evalkit.runs.task_payload import TaskPayload, travelling
from evalkit.sandbox.docker.images import recipe_hash
from evalkit.sandbox.protocol import CAPABILITIES, SandboxBackend
from evalkit.sandbox.workspace import build_workspace

SECRET = "sk-probe-7f3a9c1e-never-travels"


def test_a_node_job_carries_the_key_variable_name_never_its_value(monkeypatch, toy_task):
    monkeypatch.setenv("PROBE_KEY", SECRET)
    spec = ModelSpec(name="probe", model="m", base_url="http://10.0.0.9:8000/v1", api_key_env="PROBE_KEY")
    assert spec.api_key() == SECRET  # the driver could read it...
    settings = AttemptSettings("tool-loop", LimitOverrides(max_turns=3), 1000, "fail")
    job = NodeJob("r1", "docker", {"probe": spec}, settings, BuiltinEndpoint("http://10.0.0.1:1/v1", "run-token"))
    attempt = NodeAttempt(TaskPayload.pack(toy_task, build_workspace(toy_task.source)), "probe", 0)
    sent = pickle.dumps(job) + pickle.dumps(attempt)
    assert SECRET.encode() not in sent  # ...but only its name travels
    assert b"PROBE_KEY" in sent
    landed = pickle.loads(pickle.dumps(attempt))
    assert landed.key.task == toy_task and (landed.model, landed.sample) == ("probe", 0)


def test_a_recipe_folder_travels_and_lands_under_its_content_hash(tmp_path, toy_task):
    recipe = tmp_path / "suite" / "env-py"
    (recipe / "files").mkdir(parents=True)
    (recipe / "Dockerfile").write_text("ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nCOPY files /opt/files\n")
    (recipe / "files" / "pin.txt").write_text("pytest==8.3.5\n")
    task = toy_task.model_copy(update={"image": str(recipe)})
    payload = pickle.loads(pickle.dumps(TaskPayload.pack(task, build_workspace(task.source))))
    node_cache = tmp_path / "node-cache"
    landed = payload.landed(node_cache)
    assert landed.image != task.image and landed.image.startswith(str(node_cache))
    assert landed.image.endswith("/env-py")  # the tag takes the folder's name
    assert recipe_hash(type(recipe)(landed.image), "base-id") == recipe_hash(recipe, "base-id")
    assert payload.landed(node_cache) == landed  # unpacked once, found again


@pytest.mark.parametrize("image", ["python", "ghcr.io/acme/env:1"])
def test_a_recipe_of_evalkit_or_an_image_reference_travels_as_its_name(image, toy_task):
    task = toy_task.model_copy(update={"image": image})
    payload = TaskPayload.pack(task, build_workspace(task.source))
    assert payload.recipe is None and payload.landed() == task


def test_the_built_in_models_answer_a_cluster_only_with_the_runs_token():
    with ModelServer({"null": NullPolicy()}, host="127.0.0.1", token="run-token", advertised="127.0.0.1") as server:
        outsider = openai.OpenAI(base_url=server.base_url, api_key="guess", max_retries=0)
        with pytest.raises(openai.AuthenticationError, match="token"):
            outsider.chat.completions.create(model="null", messages=[{"role": "user", "content": "the answer?"}])
        with pytest.raises(openai.AuthenticationError):
            outsider.models.list()
        worker = openai.OpenAI(base_url=server.base_url, api_key="run-token", max_retries=0)
        reply = worker.chat.completions.create(model="null", messages=[{"role": "user", "content": "go"}])
        assert reply.choices[0].message is not None


def test_a_driver_without_an_engine_packs_tasks_and_refuses_to_open_sandboxes(monkeypatch, toy_task):
    """The driver of a cluster run without --registry opens no engine (DOCKER_HOST points nowhere
    here): it builds the workspace that travels, keeps it for scoring, and opening a sandbox,
    the nodes' job, is one SandboxError."""
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent.sock")
    backend = _open_backend("r1", remote=True)
    payload = travelling(toy_task, backend, None)
    assert payload.workspace.base_commit == build_workspace(toy_task.source).base_commit
    assert backend.workspace(toy_task) is payload.workspace  # built once, read again by scoring
    with pytest.raises(SandboxError, match=r"^the agent sandbox of .*: the driver of a cluster run builds workspaces"):
        backend.open(toy_task, "agent")
    assert backend.close() == 0 and isinstance(backend, SandboxBackend)
    assert not any(isinstance(backend, capability) for capability in CAPABILITIES)  # the core alone
    with pytest.raises(SandboxError, match="no Docker engine answers"):
        _open_backend("r1", remote=False)  # a local run needs the engine
