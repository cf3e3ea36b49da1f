"""`evalkit gather`: a validated suite of short-prompt, large-diff tasks from a repository's history.

History (size and shape) and environment (a recipe per dependency set), serial and cheap → prompt
(commit message, optionally rewritten) and validation in the sandbox, `concurrency` candidates side
by side → a suite folder plus `gather-report.json` listing every commit left out and why.

Every decision is journaled as it is made (journal.py), so a gather killed and run again with the
same `--out` continues. The suite does not depend on the concurrency: it is the first `max_tasks`
accepted commits in history order (newest first), and a candidate is validated only while fewer than
`max_tasks` commits before it were accepted.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from rich.console import Console

from evalkit.diffs import DEFAULT_TEST_GLOBS, changed_paths, parsed_diff
from evalkit.errors import EvalkitError
from evalkit.files import write_atomic
from evalkit.gather.commit_tree import folder_files, neighbour_modules, tree_reader
from evalkit.gather.display import GatherDisplay
from evalkit.gather.environment import (
    Environment,
    detect_environment,
    older_python_only,
    package_modules,
    write_recipe,
)
from evalkit.gather.era import Era, era_of
from evalkit.gather.history import (
    DEFAULT_PYTHON_FILES,
    Candidate,
    Commit,
    Rejection,
    SizeLimits,
    commits,
    git,
    screen,
    split_commit,
    test_modules,
    texts_at,
)
from evalkit.gather.journal import Decision, Journal
from evalkit.gather.layout import TreeReader
from evalkit.gather.node_candidate import CandidateOnNode, NodeCandidateCheck
from evalkit.gather.pytest_options import plugin_of_option
from evalkit.gather.repair_loop import EnvChoice, RepairBook, RepairedTests, project_names, repaired_tests
from evalkit.gather.report import REPORT, GatherReport, funnel_of
from evalkit.gather.sampling import MAX_IDS_PER_FUNCTION
from evalkit.gather.task_prompt import task_prompt
from evalkit.gather.unexplained import behaviour_unasked
from evalkit.gather.validate import CandidateTests, validate_candidate
from evalkit.models.client import ChatClient
from evalkit.runs.executor import Executor, NodeFailure
from evalkit.runs.fan_out import fan_out
from evalkit.runs.item_errors import fails_every_item, item_error_line
from evalkit.runs.local_executor import LocalExecutor
from evalkit.runs.task_payload import travelling
from evalkit.sandbox.backend_table import DEFAULT_BACKEND
from evalkit.sandbox.engine_watch import EngineWatch
from evalkit.sandbox.env_recipe import HOST_CA_BUNDLE
from evalkit.sandbox.protocol import SandboxBackend, engine_of
from evalkit.sandbox.workspace import cached_clone
from evalkit.tasks.load import SUITE_FILE, load_suite
from evalkit.tasks.model import UNDERSPECIFIED, Task, TaskSource, TestSpec
from evalkit.tasks.write import remove_task_folder, write_suite
from evalkit.wording import counted

__all__ = ["REPORT", "GatherOptions", "GatherReport", "gather", "open_repository"]


@dataclass
class GatherOptions:
    since: str | None = None
    until: str | None = None
    max_tasks: int = 20
    limits: SizeLimits = field(default_factory=SizeLimits)
    test_globs: tuple[str, ...] | None = None  # None: where the repository keeps its tests (layout.py)
    max_prompt_chars: int = 400
    runs: int = 3
    # one test run's wall time: a commit whose base makes its tests crawl (a denial-of-service fix:
    # sqlparse's tests ran for over 6 minutes on the base) costs a gather 2 x runs of them
    test_timeout_s: float = 180
    max_pass_to_pass: int = 50
    neighbour_modules: int = 5  # existing test modules beside the touched ones, run for PASS_TO_PASS
    ca_bundle: Path = HOST_CA_BUNDLE
    rewriter: ChatClient | None = None
    concurrency: int = 2  # candidates validated side by side
    max_ids_per_test: int = MAX_IDS_PER_FUNCTION  # FAIL_TO_PASS ids kept per test function
    keep_underspecified: bool = False  # keep tasks whose tests need names no prompt gives (flagged)


@dataclass(frozen=True)
class _Work:
    """A candidate screened in, waiting for its prompt and validation."""

    position: int  # in history order, newest first
    candidate: Candidate
    env: Environment
    image: str  # the task's `image` value
    era: Era  # the pytest and PyPI of the commit's time
    test_paths: str  # where the split's test globs came from (metadata.test_paths)
    patterns: tuple[str, ...]  # how the project names its test modules (pytest's python_files)


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


def _subject(commit: Commit) -> str:
    message = commit.message
    return message.splitlines()[0] if message else ""


@dataclass(frozen=True)
class _Gathering:
    """What the steps of one gather share."""

    local: Path  # the clone
    source: str  # what tasks record as their source
    name: str  # the repository's name, in task ids
    out: Path
    options: GatherOptions
    trees: TreeReader
    engine: EngineWatch  # the backend's: which errors mean its engine is gone
    repairs: RepairBook  # environments repaired so far, by the recipe they started from


def _screen(
    g: _Gathering, history: list[Commit], decided: dict[str, Decision], journal: Journal, display: GatherDisplay
) -> list[_Work]:
    """Every commit not decided yet screened by size and shape (rejections journaled at once), and
    the environment of each candidate written: the candidates left to validate, in history order."""
    queue = []
    for position, commit in enumerate(history):
        if commit.sha in decided:
            display.screened_one(decided[commit.sha], earlier=True)
            continue
        stage = "history"
        try:
            layout = g.trees.layout(commit.sha) if g.options.test_globs is None else None
            globs = layout.globs if layout else g.options.test_globs or DEFAULT_TEST_GLOBS
            test_paths = layout.describe() if layout else "--test-glob " + " ".join(globs)
            patterns = layout.python_files if layout else DEFAULT_PYTHON_FILES
            patch, test_patch = split_commit(g.local, commit, globs)
            read = partial(texts_at, g.local, commit.parent, commit.sha)
            at = g.trees.at_commit(commit.sha, globs, patterns)
            screened = screen(commit, patch, test_patch, g.options.limits, patterns, read, at)
            if isinstance(screened, str):
                display.screened_one(journal.reject(Rejection(commit.sha, _subject(commit), stage, screened)))
                continue
            stage = "environment"
            read, has_folder = tree_reader(g.local, commit.parent)
            listing = partial(folder_files, g.local, commit.parent)
            if older := older_python_only(read, package_modules(changed_paths(screened.patch), listing)):
                display.screened_one(journal.reject(Rejection(commit.sha, _subject(commit), stage, older)))
                continue
            env, era = detect_environment(read, has_folder, listing), era_of(commit.date)
            image = write_recipe(env, g.name, g.out, g.options.ca_bundle, era)
        except Exception as exc:  # one commit's failure is one rejection
            display.screened_one(journal.reject(_failed(g, commit, stage, exc)))
            continue
        queue.append(_Work(position, screened, env, image, era, test_paths, patterns))
        display.screened_one(None)
    display.screening_done()
    return queue


# (provisional task, neighbour modules, python_files patterns, modules to run) → its tests
TestsRunner = Callable[[Task, list[str], tuple[str, ...], list[str]], CandidateTests]


def _failed(g: _Gathering, commit: Commit, stage: str, error: Exception) -> Rejection:
    """The rejection recording `error` against the commit at `stage`; an error that would fail every
    commit alike (the engine, the machine, the options) is raised instead."""
    if fails_every_item(error, g.engine.unreachable):
        raise error
    return Rejection(commit.sha, _subject(commit), stage, f"error: {item_error_line(error)}")


def _validate(g: _Gathering, work: _Work, run_tests: TestsRunner) -> Task | Rejection:
    """A candidate's prompt and tests: the task, or why it is left out (an error of this commit's
    own is a rejection at the stage that raised it)."""
    commit = work.candidate.commit
    try:
        made = _prompt(g.local, work.candidate, g.options)
    except Exception as exc:
        return _failed(g, commit, "prompt", exc)
    try:
        return _tested(g, work, run_tests, *made)
    except Exception as exc:
        return _failed(g, commit, "validation", exc)


def _tested(
    g: _Gathering, work: _Work, run_tests: TestsRunner, prompt: str, meta: dict[str, str], left_out: str | None
) -> Task | Rejection:
    options, name = g.options, g.name
    candidate, commit = work.candidate, work.candidate.commit
    if left_out:
        return Rejection(commit.sha, _subject(commit), "prompt", left_out)
    task_id = f"{name}-{commit.sha[:10]}"
    provisional = Task(
        id=task_id,
        prompt=prompt,
        repo=name,
        image=_image_value(g, task_id, work.image),
        source=TaskSource(git=g.source, base_commit=commit.parent),
        tests=TestSpec(command=work.env.test_command, fail_to_pass=["placeholder"], timeout_s=options.test_timeout_s),
        patch=candidate.patch,
        test_patch=candidate.test_patch,
    )
    touched = list(candidate.test_files) or test_modules(candidate.test_patch, work.patterns)
    deleted = [p.path for p in parsed_diff(candidate.test_patch) if p.is_removed_file]  # not there to run
    limit = options.neighbour_modules
    neighbours = neighbour_modules(g.local, commit.parent, touched, limit, work.patterns, leave_out=deleted)
    repaired = _repaired_tests(g, work, provisional, neighbours, touched, run_tests)
    tests, env, rounds = repaired.tests, repaired.choice.env, tuple(repaired.rounds)
    if tests.reason:
        why = (tests.reason, tests.environment, repaired.loss, rounds)
        return Rejection(commit.sha, _subject(commit), "validation", *why)
    if (unasked := behaviour_unasked(_subject(commit), tests.failed_before)) and not options.keep_underspecified:
        return Rejection(commit.sha, _subject(commit), "validation", f"underspecified: {unasked}", tests.environment)
    meta = {**meta, **({UNDERSPECIFIED: ", ".join(tests.failed_before)} if unasked else {})}
    sampled = len(tests.fail_to_pass) < tests.fail_to_pass_total
    metadata = {
        "commit": commit.sha,
        "commit_date": commit.date,
        "original_message": commit.message,
        **meta,
        "era": repaired.choice.era.name,
        "test_paths": work.test_paths,
        **({"environment": ", ".join(env.sources)} if env.sources else {}),
        **({"environment_repairs": "; ".join(rounds)} if rounds else {}),
        **({"flaky_tests": ", ".join(tests.flaky)} if tests.flaky else {}),
        **({"failing_with_change": ", ".join(tests.broken)} if tests.broken else {}),
        **({"position_dependent_tests": tests.positions_said()} if tests.position_dependent else {}),
        **({"fail_to_pass_total": str(tests.fail_to_pass_total)} if sampled else {}),
        **({"fail_to_pass_sample": f"at most {options.max_ids_per_test} ids per test function"} if sampled else {}),
        **({"validated_on": tests.node} if tests.node else {}),  # a cluster node
    }
    spec = TestSpec(command=env.test_command, fail_to_pass=tests.fail_to_pass, pass_to_pass=tests.pass_to_pass)
    update = {"image": repaired.choice.image, "tags": ["gathered"], "tests": spec, "metadata": metadata}
    return provisional.model_copy(update=update)


def _image_value(g: _Gathering, task_id: str, image: str) -> str:
    """A task's `image` as load_suite resolves it: a recipe beside the suite by its path."""
    return str((g.out / task_id / image).resolve()) if image != "python" else image


def _repaired_tests(
    g: _Gathering, work: _Work, provisional: Task, neighbours: list[str], touched: list[str], run_tests: TestsRunner
) -> RepairedTests:
    """The candidate's tests in its environment, repaired by class while they do not run."""

    def run(choice: EnvChoice) -> CandidateTests:
        spec = provisional.tests.model_copy(update={"command": choice.env.test_command})
        task = provisional.model_copy(update={"image": _image_value(g, provisional.id, choice.image), "tests": spec})
        return run_tests(task, neighbours, work.patterns, touched)

    commit = work.candidate.commit
    listing = git(g.local, "ls-tree", "-r", "--name-only", commit.parent).splitlines()
    added = [p.path for p in parsed_diff(work.candidate.patch + work.candidate.test_patch) if p.is_added_file]
    names = project_names(listing, added)
    start = EnvChoice(work.env, work.era, work.image)
    return repaired_tests(start, run, g.repairs, commit.date, names.__contains__, plugin_of_option)


def gather(
    repo: str,
    out: Path,
    options: GatherOptions,
    backend: SandboxBackend,
    display: GatherDisplay | None = None,
    executor: Executor | None = None,
    backend_name: str = DEFAULT_BACKEND,
    registry: str | None = None,
) -> GatherReport:
    """Gather into `out`, continuing from the decisions already journaled there; candidates'
    tests run on `executor` (None: here, on `backend`)."""
    local, source = open_repository(repo)
    name = (
        local.name.removesuffix(".git") if source == str(local) else Path(source.rstrip("/")).name.removesuffix(".git")
    )
    display = display or GatherDisplay(Console(quiet=True), options.concurrency)
    journal = Journal(out, source)
    decided = journal.open()
    history = commits(local, options.since, options.until)
    display.window(len(history))
    if not (out / SUITE_FILE).exists():
        _write_suite_file(out, source, 0, len(history))  # the folder is a suite from the start
    book = RepairBook(lambda env, era: write_recipe(env, name, out, options.ca_bundle, era))
    g = _Gathering(local, source, name, out, options, TreeReader(local), engine_of(backend), book)
    queue = _screen(g, history, decided, journal, display)
    accepted_at = {i for i, c in enumerate(history) if c.sha in decided and decided[c.sha].outcome == "accepted"}
    lock = threading.Lock()

    def job(work: _Work) -> Task | Rejection | None:
        with lock:
            if sum(p < work.position for p in accepted_at) >= options.max_tasks:
                return None  # enough tasks before it: it cannot make the suite
        display.started(work.candidate.commit.sha, _subject(work.candidate.commit))
        return _validate(g, work, run_tests)

    def finished(work: _Work, result: Task | Rejection | None) -> None:
        if isinstance(result, Rejection):
            display.decided(journal.reject(result))
        elif result is not None:
            repairs = [r for r in result.metadata.get("environment_repairs", "").split("; ") if r]
            decision = journal.accept(result, work.candidate.commit.sha, _subject(work.candidate.commit), repairs)
            with lock:
                accepted_at.add(work.position)
            f2p, p2p = len(result.tests.fail_to_pass), len(result.tests.pass_to_pass)
            display.decided(decision, f" (FAIL_TO_PASS {f2p}, PASS_TO_PASS {p2p})")

    def failed(work: _Work, error: BaseException) -> None:
        if not isinstance(error, NodeFailure):
            raise error
        commit = work.candidate.commit  # not the commit's fault: left undecided, the next gather tries it again
        display.undecided(commit.sha, _subject(commit), str(error))

    run_tests = _tests_runner(options, backend, executor or LocalExecutor(), backend_name, registry)
    started = time.monotonic()
    stop = executor.stop_calls if executor is not None else None
    fan_out(
        queue, job, backend=backend, concurrency=options.concurrency, on_result=finished, on_error=failed, stop=stop
    )
    report = _rebuild(journal, history, out, options.max_tasks)
    report.resumed, report.validated_now, report.concurrency = len(decided), display.validated_now, options.concurrency
    report.validation_s = time.monotonic() - started if display.validated_now else 0.0
    write_atomic(out / REPORT, json.dumps(report.as_json(), indent=2) + "\n")
    return report


def _tests_runner(
    options: GatherOptions, backend: SandboxBackend, executor: Executor, backend_name: str, registry: str | None
) -> TestsRunner:
    """How a candidate's tests run: here on `backend`, or on a node of the executor's cluster."""
    if not executor.remote:
        runs, cap, per_function = options.runs, options.max_pass_to_pass, options.max_ids_per_test
        return lambda task, neighbours, patterns, to_run: validate_candidate(
            task, backend, runs, cap, neighbours, per_function, patterns, to_run
        )
    check = NodeCandidateCheck(
        backend.run_id, backend_name, options.runs, options.max_pass_to_pass, options.max_ids_per_test
    )
    return lambda task, neighbours, patterns, to_run: executor.call(
        check, CandidateOnNode(travelling(task, backend, registry), neighbours, patterns, to_run)
    )


def _write_suite_file(out: Path, source: str, kept: int, scanned: int) -> None:
    description = f"Tasks gathered by evalkit from {source} ({kept} of {counted(scanned, 'commit')})."
    write_suite(out, out.name, description, [])


def _rebuild(journal: Journal, history: list[Commit], out: Path, max_tasks: int) -> GatherReport:
    """The suite and the report from the journal: the first `max_tasks` accepted commits of the
    window in history order are kept; a task accepted beyond them (validated side by side with
    an earlier one) has its folder removed, so the suite does not depend on the concurrency."""
    position = {c.sha: i for i, c in enumerate(history)}
    decisions = sorted((d for d in journal.read().values() if d.sha in position), key=lambda d: position[d.sha])
    accepted = [d for d in decisions if d.outcome == "accepted" and journal.has_folder(d)]
    for beyond in accepted[max_tasks:]:
        remove_task_folder(out, beyond.task_id)
    kept_ids = [d.task_id for d in accepted[:max_tasks]]
    loaded = {t.id: t for t in load_suite(out).tasks} if kept_ids else {}
    _write_suite_file(out, journal.repo, len(kept_ids), len(history))
    return GatherReport(
        repo=journal.repo,
        accepted=[loaded[i] for i in kept_ids if i in loaded],
        rejected=[d.rejection() for d in decisions if d.outcome == "rejected"],
        scanned=len(history),
        funnel=funnel_of(len(history), decisions, len(kept_ids)),
    )
