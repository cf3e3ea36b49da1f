"""`evalkit gather`: a validated suite of short-prompt, large-diff tasks from a repository's history.

History (size and shape) → environment (a recipe per dependency set) → prompt (commit message,
optionally rewritten) → validation in the sandbox → a suite folder plus `gather-report.json`
listing every commit left out and why.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from evalkit.diffs import DEFAULT_TEST_GLOBS
from evalkit.errors import EvalkitError
from evalkit.files import write_atomic
from evalkit.gather.environment import HOST_CA_BUNDLE, detect_environment, write_recipe
from evalkit.gather.history import (
    Candidate,
    Rejection,
    SizeLimits,
    commits,
    screen,
    split_commit,
)
from evalkit.gather.task_prompt import task_prompt
from evalkit.gather.validate import test_files, validate_candidate
from evalkit.models.client import ChatClient
from evalkit.sandbox.backend import SandboxBackend
from evalkit.sandbox.workspace import cached_clone
from evalkit.tasks.model import Task, TaskSource, TestSpec
from evalkit.tasks.write import write_suite
from evalkit.wording import counted

REPORT = "gather-report.json"


@dataclass
class GatherOptions:
    since: str | None = None
    until: str | None = None
    max_tasks: int = 20
    limits: SizeLimits = field(default_factory=SizeLimits)
    test_globs: tuple[str, ...] = DEFAULT_TEST_GLOBS
    max_prompt_chars: int = 400
    runs: int = 3
    max_pass_to_pass: int = 50
    neighbour_modules: int = 5  # existing test modules beside the touched ones, run for PASS_TO_PASS
    ca_bundle: Path = HOST_CA_BUNDLE
    rewriter: ChatClient | None = None
    keep_underspecified: bool = False  # keep tasks whose tests need names no prompt gives (flagged)


@dataclass
class GatherReport:
    repo: str
    accepted: list[Task] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    scanned: int = 0

    def as_json(self) -> dict:
        return {
            "repo": self.repo,
            "scanned_commits": self.scanned,
            "accepted": [
                {"task_id": t.id, "commit": t.metadata.get("commit"), "prompt": t.prompt} for t in self.accepted
            ],
            "rejected": [asdict(r) for r in self.rejected],
        }


def open_repository(repo: str, cache: Path | None = None) -> tuple[Path, str]:
    """(local clone, what tasks record as their source): a path is used as is; a URL is cloned
    into the cache (one clear line when the network or the URL fails)."""
    local = Path(repo).expanduser()
    if local.exists():
        if not (local / ".git").exists() and not (local / "HEAD").exists():
            raise EvalkitError(f"{repo}: not a git repository")
        return local.resolve(), str(local.resolve())
    if "://" not in repo and not repo.startswith("git@"):
        raise EvalkitError(f"{repo}: no such folder, and not a URL")
    return cached_clone(repo, cache, hint="clone it yourself and pass the folder"), repo


def _reader(repo: Path, commit: str) -> tuple[Callable[[str], str | None], Callable[[str], bool]]:
    def read(path: str) -> str | None:
        result = subprocess.run(["git", "show", f"{commit}:{path}"], cwd=repo, capture_output=True, text=True)
        return result.stdout if result.returncode == 0 else None

    def has_folder(path: str) -> bool:
        result = subprocess.run(["git", "cat-file", "-t", f"{commit}:{path}"], cwd=repo, capture_output=True, text=True)
        return result.stdout.strip() == "tree"

    return read, has_folder


def neighbour_modules(repo: Path, commit: str, touched: list[str], limit: int) -> list[str]:
    """Up to `limit` test modules already in the tree at `commit`, from the folders of the
    touched ones (nearest first: same folder, sorted by name)."""
    if limit <= 0 or not touched:
        return []
    folders = {str(Path(p).parent) for p in touched}
    listed = subprocess.run(["git", "ls-tree", "-r", "--name-only", commit], cwd=repo, capture_output=True, text=True)
    found = []
    for path in sorted(listed.stdout.splitlines()):
        name = Path(path).name
        is_module = name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
        if is_module and str(Path(path).parent) in folders and path not in touched:
            found.append(path)
    return found[:limit]


def _prompt(local: Path, candidate: Candidate, options: GatherOptions) -> tuple[str, dict[str, str], str | None]:
    """(prompt, metadata, why the candidate is left out at this stage or None)."""
    commit = candidate.commit
    made = task_prompt(
        local, commit.parent, commit.sha, commit.message, (candidate.patch, candidate.test_patch),
        options.max_prompt_chars, options.rewriter,
    )  # fmt: skip
    if not made.prompt:
        return "", made.metadata, "the commit message gives no usable prompt"
    if made.underspecified and not options.keep_underspecified:
        names = ", ".join(made.underspecified)
        return "", made.metadata, f"underspecified: the tests need {names}, which neither prompt nor interface gives"
    return made.prompt, made.metadata, None


def gather(
    repo: str,
    out: Path,
    options: GatherOptions,
    backend: SandboxBackend,
    log: Callable[[str], None] = lambda line: None,
) -> GatherReport:
    local, source = open_repository(repo)
    name = (
        local.name.removesuffix(".git") if source == str(local) else Path(source.rstrip("/")).name.removesuffix(".git")
    )
    report = GatherReport(repo=source)
    history = commits(local, options.since, options.until)
    report.scanned = len(history)
    out.mkdir(parents=True, exist_ok=True)
    for commit in history:
        if len(report.accepted) >= options.max_tasks:
            break
        subject = commit.message.splitlines()[0] if commit.message else ""
        patch, test_patch = split_commit(local, commit, options.test_globs)
        screened = screen(commit, patch, test_patch, options.limits)
        if isinstance(screened, str):
            report.rejected.append(Rejection(commit.sha, subject, "history", screened))
            continue
        prompt, meta, left_out = _prompt(local, screened, options)
        if left_out:
            report.rejected.append(Rejection(commit.sha, subject, "prompt", left_out))
            continue
        env = detect_environment(*_reader(local, commit.parent))
        image = write_recipe(env, name, out, options.ca_bundle)
        task_id = f"{name}-{commit.sha[:10]}"
        log(f"validating {commit.sha[:10]} {subject[:60]}")
        provisional = Task(
            id=task_id,
            prompt=prompt,
            repo=name,
            image=str((out / task_id / image).resolve()) if image != "python" else image,  # as load_suite will
            source=TaskSource(git=source, base_commit=commit.parent),
            tests=TestSpec(command=env.test_command, fail_to_pass=["placeholder"]),
            patch=patch,
            test_patch=test_patch,
        )
        neighbours = neighbour_modules(local, commit.parent, test_files(test_patch), options.neighbour_modules)
        candidate_tests = validate_candidate(provisional, backend, options.runs, options.max_pass_to_pass, neighbours)
        if candidate_tests.reason:
            report.rejected.append(Rejection(commit.sha, subject, "validation", candidate_tests.reason))
            continue
        metadata = {
            "commit": commit.sha,
            "commit_date": commit.date,
            "original_message": commit.message,
            **meta,
            **({"environment": ", ".join(env.sources)} if env.sources else {}),
            **({"flaky_tests": ", ".join(candidate_tests.flaky)} if candidate_tests.flaky else {}),
            **({"failing_with_change": ", ".join(candidate_tests.broken)} if candidate_tests.broken else {}),
        }
        report.accepted.append(
            provisional.model_copy(
                update={
                    "image": image,
                    "tags": ["gathered"],
                    "tests": TestSpec(
                        command=env.test_command,
                        fail_to_pass=candidate_tests.fail_to_pass,
                        pass_to_pass=candidate_tests.pass_to_pass,
                    ),
                    "metadata": metadata,
                }
            )
        )
    scanned = counted(report.scanned, "commit")
    description = f"Tasks gathered by evalkit from {source} ({len(report.accepted)} of {scanned})."
    write_suite(out, out.name, description, report.accepted, replace=True)
    write_atomic(out / REPORT, json.dumps(report.as_json(), indent=2) + "\n")
    return report
