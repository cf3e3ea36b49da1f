"""A packed suite travels alone: its tasks start from a git bundle inside the suite, give the same
workspace as the repository they were gathered from, name their upstream and license, and carry
recipes without the host's files (the build supplies those)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import tomli_w

from evalkit.errors import EvalkitError
from evalkit.gather.pack import Upstream, pack_suite
from evalkit.sandbox.docker.images import CA_FILE, with_host_files
from evalkit.sandbox.workspace import build_workspace
from evalkit.tasks.load import load_suite

DIFF = "--- a/lib.py\n+++ b/lib.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _upstream_repo(path: Path) -> list[str]:
    """A repository of three commits (a license, a module changing); their ids, oldest first."""
    path.mkdir()
    _git(path, "init", "-q")
    (path / "LICENSE").write_text("MIT License\nCopyright (c) the authors\n")
    commits = []
    for n in range(3):
        (path / "lib.py").write_text(f"x = {n}\n")
        if n == 2:  # a later commit no task starts from: the bundle must not carry it
            (path / "big.bin").write_bytes(os.urandom(50_000))
        _git(path, "add", ".")
        _git(path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", f"c{n}")
        commits.append(_git(path, "rev-parse", "HEAD"))
    return commits


def _gathered_suite(folder: Path, repo: Path, bases: list[str]) -> Path:
    recipe = folder / "_env" / "lib-1234"
    recipe.mkdir(parents=True)
    (recipe / "Dockerfile").write_text("FROM x\nCOPY ca-bundle.crt pip-26.0-py3-none-any.whl /tmp/\n")
    (recipe / "ca-bundle.crt").write_text("host certificates")
    (recipe / "pip-26.0-py3-none-any.whl").write_bytes(b"wheel")
    (folder / "suite.toml").write_text('name = "gathered"\n')
    for n, base in enumerate(bases):
        task = folder / f"lib-{n}"
        task.mkdir()
        record = {
            "prompt": "Change x.",
            "image": "../_env/lib-1234",
            "source": {"git": str(repo), "base_commit": base},
            "tests": {"fail_to_pass": ["test_lib.py::test_x"]},
            "metadata": {"commit": f"child-of-{base}", "commit_date": f"2024-0{n + 1}-01T00:00:00Z"},
        }
        (task / "task.toml").write_text(tomli_w.dumps(record))
        (task / "patch.diff").write_text(DIFF)
        (task / "test_patch.diff").write_text(DIFF.replace("lib.py", "test_lib.py"))
    return folder


def test_packed_tasks_start_from_the_same_tree_out_of_a_bundle_in_the_suite(tmp_path: Path) -> None:
    commits = _upstream_repo(tmp_path / "owner__lib.git")
    gathered = _gathered_suite(tmp_path / "gathered", tmp_path / "owner__lib.git", commits[:2])
    upstreams = {"owner__lib": Upstream("https://example.org/owner/lib", "MIT")}
    report = pack_suite(gathered, tmp_path / "shipped", "lib", "Real tasks.", upstreams)

    (tmp_path / "owner__lib.git").rename(tmp_path / "gone")  # the packed suite must not need it
    packed = {t.id: t for t in load_suite(tmp_path / "shipped").tasks}
    assert sorted(packed) == ["lib-0", "lib-1"]
    assert [(r.name, r.tasks) for r in report] == [("owner__lib", 2)]
    bundle = tmp_path / "shipped" / "repos" / "owner__lib.bundle"
    assert packed["lib-0"].source.git == str(bundle)
    assert bundle.stat().st_size < 10_000  # two small trees, not the history's 50 kB file

    for n, task in enumerate(packed.values()):
        assert task.metadata["upstream"] == "https://example.org/owner/lib"
        assert task.metadata["upstream_base_commit"] == commits[n]
        assert task.metadata["license"] == "MIT"
        assert task.metadata["commit"] == f"child-of-{commits[n]}"  # upstream ids kept
    first, second = (build_workspace(packed[i].source, tmp_path / "cache").base_commit for i in ("lib-0", "lib-1"))
    assert first != second  # each task its own tree, built with the upstream repository gone
    assert (tmp_path / "shipped" / "repos" / "owner__lib.LICENSE").read_text().startswith("MIT License")
    shipped_recipe = tmp_path / "shipped" / "_env" / "lib-1234"
    assert sorted(p.name for p in shipped_recipe.iterdir()) == ["Dockerfile"]


def test_workspace_from_a_bundle_equals_the_one_from_the_repository(tmp_path: Path) -> None:
    commits = _upstream_repo(tmp_path / "owner__lib.git")
    gathered = _gathered_suite(tmp_path / "gathered", tmp_path / "owner__lib.git", [commits[1]])
    before = build_workspace(load_suite(gathered).tasks[0].source, tmp_path / "cache")
    pack_suite(gathered, tmp_path / "shipped", "lib", "", {"owner__lib": Upstream("u", "MIT")})
    after = build_workspace(load_suite(tmp_path / "shipped").tasks[0].source, tmp_path / "cache")
    assert after.base_commit == before.base_commit


def test_a_relative_out_folder_is_where_the_bundle_goes(tmp_path: Path, monkeypatch) -> None:
    commits = _upstream_repo(tmp_path / "owner__lib.git")
    gathered = _gathered_suite(tmp_path / "gathered", tmp_path / "owner__lib.git", commits[:1])
    monkeypatch.chdir(tmp_path)
    pack_suite(gathered, Path("shipped"), "lib", "", {"owner__lib": Upstream("u", "MIT")})
    assert (tmp_path / "shipped" / "repos" / "owner__lib.bundle").is_file()


def test_a_repository_without_its_upstream_is_refused(tmp_path: Path) -> None:
    commits = _upstream_repo(tmp_path / "owner__lib.git")
    gathered = _gathered_suite(tmp_path / "gathered", tmp_path / "owner__lib.git", commits[:1])
    with pytest.raises(EvalkitError, match="no --upstream for owner__lib"):
        pack_suite(gathered, tmp_path / "shipped", "lib", "", {})


def test_a_shipped_recipe_is_completed_with_the_host_files_it_names(tmp_path: Path) -> None:
    recipe = tmp_path / "recipe"
    recipe.mkdir()
    (recipe / "Dockerfile").write_text(f"FROM x\nCOPY {CA_FILE} /tmp/\n")
    context = with_host_files(recipe, tmp_path / "context")
    assert context == tmp_path / "context"
    assert (context / CA_FILE).read_bytes() == Path("/etc/ssl/certs/ca-certificates.crt").read_bytes()
    assert not (recipe / CA_FILE).exists()  # the shipped recipe (and its image tag) unchanged
    (recipe / CA_FILE).write_text("own")
    assert with_host_files(recipe, tmp_path / "other") == recipe  # a complete recipe builds as it is
