"""Which environment an imported SWE-bench task gets, what `--strict-env` refuses, and the
requirement files read from the local repository (includes inlined) at the environment commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

from evalkit.sandbox.docker.task_env import read_requirements
from evalkit.sandbox.env_choice import approximate_note, strict_environments, task_environment
from evalkit.tasks.model import Task
from evalkit.tasks.swebench import import_swebench


def swebench_task(repo: str, version: str | None, task_id: str = "x-1", environment: str = "swebench") -> Task:
    metadata = {"environment": environment, "environment_setup_commit": "e" * 40}
    if version is not None:
        metadata["version"] = version
    return Task.model_validate(
        {
            "id": task_id,
            "prompt": "fix it",
            "repo": repo,
            "source": {"git": "/nowhere", "base_commit": "b" * 40},
            "tests": {"fail_to_pass": ["t.py::test_a"]},
            "patch": "",
            "test_patch": "",
            "metadata": metadata,
        }
    )


def test_sphinx_3_2_gets_python_3_9_on_bullseye_exactly() -> None:
    env = task_environment(swebench_task("sphinx-doc/sphinx", "3.2"))
    assert env is not None and env.choice.base.suite == "bullseye" and not env.approximate
    assert env.setup_commit == "e" * 40
    assert approximate_note(swebench_task("sphinx-doc/sphinx", "3.2")) is None


def test_django_3_1_wants_python_3_6_and_is_marked_approximate() -> None:
    note = approximate_note(swebench_task("django/django", "3.1"))
    assert note == "approximate: Python 3.6 wanted, 3.9 used (bullseye)"


def test_tasks_without_a_known_spec_keep_their_own_image() -> None:
    assert task_environment(swebench_task("someone/unknown", "1.0")) is None
    assert task_environment(swebench_task("sphinx-doc/sphinx", None)) is None
    assert task_environment(swebench_task("sphinx-doc/sphinx", "3.2", environment="")) is None


def test_strict_env_refuses_only_approximate_tasks_one_line_each() -> None:
    exact = swebench_task("sphinx-doc/sphinx", "3.2", "sphinx-1")
    own = swebench_task("someone/unknown", "1.0", "own-1")
    old = swebench_task("django/django", "3.1", "django-1")
    kept, refused = strict_environments([exact, old, own])
    assert [t.id for t in kept] == ["sphinx-1", "own-1"]
    assert refused == ["django-1: refused by --strict-env, its environment is approximate: Python 3.6 wanted, "
                       "3.9 used (bullseye)"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def commit_files(repo: Path, files: dict[str, str]) -> str:
    repo.mkdir(exist_ok=True)
    git(repo, "init", "-q")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    return git(repo, "rev-parse", "HEAD").strip()


def test_requirements_are_read_at_the_commit_with_includes_inlined(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    commit = commit_files(
        repo, {"requirements/py3.txt": "-r base.txt\nPillow>=6\n", "requirements/base.txt": "asgiref>=3\n"}
    )
    (repo / "requirements" / "py3.txt").write_text("changed after the commit\n")  # never read: the commit is
    text = read_requirements(repo, commit, ("requirements.txt", "requirements/py3.txt"))
    assert text == "asgiref>=3\n\nPillow>=6\n"
    assert read_requirements(repo, commit, ("absent.txt",)) is None


def test_import_finds_a_clone_named_otherwise_by_its_base_commit(tmp_path: Path) -> None:
    repos = tmp_path / "repos"
    repos.mkdir()
    commit = commit_files(repos / "sphinx-mini.git", {"setup.py": "print()\n"})
    row = {
        "instance_id": "sphinx-doc__sphinx-1",
        "repo": "sphinx-doc/sphinx",
        "base_commit": commit,
        "patch": "",
        "test_patch": "",
        "problem_statement": "fix it",
        "FAIL_TO_PASS": '["tests/test_a.py::test_a"]',
        "version": "3.2",
    }
    other = {**row, "instance_id": "django__django-1", "repo": "django/django", "base_commit": "d" * 40}
    tasks, problems = import_swebench([row, other], repos)
    assert tasks[0].source.git == str((repos / "sphinx-mini.git").resolve())
    assert tasks[1].source.git == "https://github.com/django/django"
    assert problems == [
        f"django/django: no clone at {repos}/django__django or {repos}/django; "
        "its tasks use https://github.com/django/django (cloned when a workspace is built)"
    ]
