"""What evalkit's guard costs a hidden-test run: the same tests, in the same sandbox (reference
change and hidden tests applied), run plainly (the task's command on the listed test files) and
guarded as scoring runs them (guard plugin with its execution evidence and whole-runner watch, the
canaries planted, the watch written, evalkit's collector receiving the guard's stream, JUnit
report, clean environment). Runs alternate, so drift
spreads over both; the median of each and their ratio per task, and over the suite (sum of
medians). Also the guarded command without the guard plugin, so the plugin's own share shows
apart from the canaries' tests and the JUnit file. Target: guarded / plain <= 1.10. The set-up
scoring does before the guarded run (guard written, canaries planted, watch written, collector
started: a few commands in the sandbox) is timed apart.

    python benchmarks/guard_overhead.py [--suite tasks/demo] [--task ID ...] [--repeats 5]
    python benchmarks/guard_overhead.py --suite tasks/python-libs --per-repository 1
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import time
from pathlib import Path

from evalkit.sandbox.docker.backend import DockerBackend, docker_client
from evalkit.tasks import Task, load_suite
from evalkit.verify.collector import await_collector, launch_collector
from evalkit.verify.correctness import SCORE_ROLE, apply_candidate, apply_hidden_tests
from evalkit.verify.guarded_run import guarded_command, plant_canaries, prepare_run, write_watch
from evalkit.verify.runners.pytest_runners import listed_test_files

ROOT = Path(__file__).resolve().parents[1]
RESET = "git reset --hard --quiet && git clean -fdq"
# Scoring runs the hidden tests once, in a fresh sandbox: no bytecode of the workspace exists yet, so
# pytest rewrites and compiles every test module. Without this, a plain run after the first reads
# the rewritten modules from __pycache__ while the guard (which compiles the watched files itself,
# never trusting a .pyc) compiles them every time: a cost charged to the guard that scoring's
# plain run would pay too.
COLD = "find . -name __pycache__ -prune -exec rm -rf {} +"


def _cpu(times_output: str) -> float:
    """The children's user + system seconds from bash's `times` (its second line: `0m1.5s 0m0.2s`)."""
    line = times_output.strip().splitlines()[-1]
    total = 0.0
    for part in line.split():
        minutes, _, seconds = part.rstrip("s").partition("m")
        total += int(minutes) * 60 + float(seconds)
    return total


def _timed(sandbox, command: str, timeout: float) -> tuple[float, float]:
    """One run as scoring makes it (no bytecode of the workspace yet), in a subshell: the sandbox's
    shell persists, and the guarded command's exports (PYTHONPATH growing by a folder each time)
    must not reach the next run. Wall seconds, and the CPU seconds of its processes (bash's
    `times` before and after, in the shell itself: a `$(times)` would fork and count nothing; less
    moved by other tenants of the machine than the wall clock)."""
    sandbox.exec(COLD, timeout=60)
    started = time.perf_counter()
    result = sandbox.exec(
        f"times > /tmp/times.0; ( {command} ) >/dev/null 2>&1; times > /tmp/times.1; "
        "cat /tmp/times.0; echo @@; cat /tmp/times.1",
        timeout=timeout,
        output_limit=1 << 20,
    )
    wall = time.perf_counter() - started
    head, _, tail = result.stdout.rpartition("@@")
    try:
        return wall, _cpu(tail) - _cpu(head)
    except ValueError:
        return wall, float("nan")


KEYS = ("plain", "guarded", "unguarded", "plain_cpu", "guarded_cpu", "unguarded_cpu", "before")


def measure(task: Task, backend: DockerBackend, repeats: int) -> dict[str, float]:
    """Medians, in seconds, for one task's hidden tests (KEYS): the plain run, the guarded run, the
    guarded run's command without the guard plugin (canaries planted, JUnit file, clean
    environment: what the plugin itself costs is the difference), each by the wall clock and by
    its processes' CPU time, and what scoring does before the guarded run (guard written, canaries
    planted, watch written, collector started)."""
    files = listed_test_files(task)
    plain_command = f"{task.tests.command} {' '.join(map(shlex.quote, files))}"
    times: dict[str, list[float]] = {key: [] for key in KEYS}

    def run_timed(key: str, sandbox, command: str) -> None:
        wall, cpu = _timed(sandbox, command, task.tests.timeout_s)
        times[key].append(wall)
        times[f"{key}_cpu"].append(cpu)

    with backend.open(task, role=SCORE_ROLE) as sandbox:
        log: list[str] = []
        assert apply_candidate(sandbox, task.patch, log), "the reference change does not apply"
        assert apply_hidden_tests(sandbox, task, sandbox.base_commit, log) is None, log[-1]
        sandbox.exec(f"git add -A && git -c user.name=b -c user.email=b@b commit -qm bench && {RESET}", timeout=120)
        for _ in range(repeats):
            sandbox.exec(RESET, timeout=120)  # no canaries of the run before
            run_timed("plain", sandbox, plain_command)
            started = time.perf_counter()
            run = prepare_run(sandbox)
            collector = launch_collector(sandbox)  # as scoring: the guard streams to it
            plant_canaries(sandbox, task, run, files)
            write_watch(sandbox, task, run, files)
            run.collector = await_collector(sandbox, collector)
            times["before"].append(time.perf_counter() - started)
            command = guarded_command(task.tests.command, run, files)
            run_timed("guarded", sandbox, command)
            run_timed("unguarded", sandbox, command.replace(f"-p {run.guard_module} ", ""))
    return {key: statistics.median(values) for key, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", type=Path, default=ROOT / "tasks/demo")
    parser.add_argument("--task", action="append", default=[], help="only these task ids")
    parser.add_argument("--per-repository", type=int, default=0, help="at most N tasks of each repository")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    tasks = load_suite(args.suite).tasks
    if args.task:
        tasks = [t for t in tasks if t.id in args.task]
    if args.per_repository:
        kept: dict[str, int] = {}
        chosen = []
        for task in tasks:
            repository = task.id.rsplit("-", 1)[0]
            if kept.get(repository, 0) < args.per_repository:
                kept[repository] = kept.get(repository, 0) + 1
                chosen.append(task)
        tasks = chosen
    backend = DockerBackend(docker_client(), run_id="bench-guard-overhead")
    totals = dict.fromkeys(KEYS, 0.0)
    print(
        f"{'task':44} {'plain s':>8} {'guarded s':>10} {'ratio':>6} {'plugin':>7} {'cpu ratio':>10} "
        f"{'cpu plugin':>11} {'set-up s':>9}   (median of {args.repeats})"
    )

    def row(name: str, t: dict[str, float]) -> None:
        print(
            f"{name:44} {t['plain']:8.2f} {t['guarded']:10.2f} {t['guarded'] / t['plain']:6.2f} "
            f"{t['guarded'] / t['unguarded']:7.2f} {t['guarded_cpu'] / t['plain_cpu']:10.2f} "
            f"{t['guarded_cpu'] / t['unguarded_cpu']:11.2f} {t['before']:9.2f}",
            flush=True,
        )

    try:
        for task in tasks:
            medians = measure(task, backend, args.repeats)
            totals = {key: totals[key] + medians[key] for key in KEYS}
            row(task.id, medians)
    finally:
        backend.close()
    row(f"all {len(tasks)} tasks", totals)
    print("ratio: guarded / plain (guard, canaries, JUnit file); plugin: guarded / the same without the plugin;")
    print("cpu: the same by the CPU seconds of the run's processes")
    print(f"with the set-up counted: {(totals['guarded'] + totals['before']) / totals['plain']:.2f} x the plain run")


if __name__ == "__main__":
    main()
