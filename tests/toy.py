"""A toy task built on the fly with real git: a tiny `calc` package, a reference change adding
`power`, and hidden tests for it. Small enough for fast integration tests of the scoring path."""

from __future__ import annotations

import shutil
import subprocess
import textwrap
from pathlib import Path

BASE_FILES = {
    "calc/__init__.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/test_calc.py": textwrap.dedent(
        """
        from calc import add, mul


        def test_add():
            assert add(2, 3) == 5


        def test_mul():
            assert mul(2, 3) == 6
        """
    ).lstrip(),
}
POWER = (
    "\n\ndef power(a, b):\n    result = 1\n    for _ in range(b):\n        result = mul(result, a)\n    return result\n"
)
HIDDEN_TEST = textwrap.dedent(
    """
    from calc import power


    def test_power():
        assert power(2, 10) == 1024


    def test_power_zero():
        assert power(7, 0) == 1
    """
).lstrip()


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def diff_of(snapshot: Path, edits: dict[str, str | bytes | None]) -> str:
    """The git diff that turns `snapshot` into `snapshot` + `edits` (None deletes a file; bytes are
    written as they are and carried as a binary patch)."""
    work = snapshot.parent / f".diff-{abs(hash(tuple(sorted(edits))))}"
    subprocess.run(["rm", "-rf", str(work)], check=True)
    subprocess.run(["cp", "-r", str(snapshot), str(work)], check=True)
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    for name, content in edits.items():
        path = work / name
        if content is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
    _git(work, "add", "--all", "--force")  # as an agent may: ignored files too
    diff = _git(work, "diff", "--cached", "--binary")
    subprocess.run(["rm", "-rf", str(work)], check=True)
    return diff


def write_files(root: Path, files: dict[str, str]) -> Path:
    """`files` (path -> text) written under `root`, which is returned."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def write_toy_suite(root: Path) -> Path:
    """Write a one-task suite folder under `root` and return it."""
    snapshot = root / "repos" / "calc"
    for name, content in BASE_FILES.items():
        (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / name).write_text(content)
    task_dir = root / "calc-power"
    task_dir.mkdir(parents=True)
    (task_dir / "patch.diff").write_text(
        diff_of(snapshot, {"calc/__init__.py": BASE_FILES["calc/__init__.py"] + POWER})
    )
    (task_dir / "test_patch.diff").write_text(diff_of(snapshot, {"tests/test_power.py": HIDDEN_TEST}))
    (task_dir / "task.toml").write_text(
        textwrap.dedent(
            """
            prompt = "Add integer power to calc."
            repo = "calc"
            [source]
            snapshot = "../repos/calc"
            [tests]
            fail_to_pass = ["tests/test_power.py::test_power", "tests/test_power.py::test_power_zero"]
            pass_to_pass = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_mul"]
            [limits]
            command_timeout_s = 60
            """
        )
    )
    return root


def one_attempt_run(task, suite_dir: Path, run_dir: Path):
    """A run folder of `task` (its suite written to `suite_dir`) with one unresolved attempt of
    model `null`, not yet scored: a RunStore."""
    from evalkit.records import AttemptRecord
    from evalkit.runs.store import RunManifest, RunStore
    from evalkit.tasks.write import write_suite

    suite = write_suite(suite_dir, "toy", "a toy suite", [task])
    store = RunStore(run_dir)
    store.open()
    now = "2026-01-01T00:00:00+00:00"
    store.write_manifest(
        RunManifest(run_id=run_dir.name, suite="toy", suite_path=str(suite), tasks=[task.id], models={"null": {}},
                    samples=1, created_at=now, updated_at=now)
    )  # fmt: skip
    store.append(AttemptRecord(run_id=run_dir.name, task_id=task.id, model="null", sample=0, resolved=False,
                               stop_reason="submitted"))  # fmt: skip
    return store


def git_tree(folder: Path, work: Path, patch: str | None = None) -> Path:
    """`folder` copied to `work` as a one-commit git repository, `patch` applied on top when given."""
    shutil.copytree(folder, work)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "b"]):
        subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)
    if patch is not None:
        subprocess.run(["git", "apply", "-"], input=patch, text=True, cwd=work, check=True)
    return work


def tree_files(folder: Path) -> dict[str, str]:
    """Every file's text outside .git, by relative path."""
    files = [p for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts]
    return {str(p.relative_to(folder)): p.read_text() for p in files}
