"""`--executor ray` on this machine: tasks per minute on one node against two, and what dispatching
an attempt through Ray costs beside the thread pool.

1. Tasks per minute of `evalkit run --model oracle` on the suite (a new process each, results in a
   temporary --out): `--executor ray` on a cluster of 1 node × 1 sandbox and of 2 nodes × 1 sandbox
   (`--concurrency` = the cluster's sandboxes), and the local executor at concurrency 1 and 2 (with
   its sandbox pool, the default, and at 1 without it, which is what a Ray node does: no pool) as
   the same-machine reference. Both Ray nodes run on this one machine and share its cores, so the
   2-node speed-up here is a floor of what separate machines give (issue 18's target: ≥ 1.7×).
   Also per attempt at concurrency 1: (wall - Σ duration_s) / attempts, what a run spends outside
   its attempts' own time (start-up, dispatch, writing rows, scoring), for Ray and for the pool.
2. Dispatch of a trivial job (returns its item) through `RayExecutor.run` and `LocalExecutor.run`
   (the thread pool), sequentially: median ms per item, and the first item on a fresh cluster
   (cold: Ray starts the worker process). Beside it, what a Ray attempt adds on its node: opening
   its own Docker backend (connect + sweep of dead owners' containers), timed here.

Each cluster is started with `ray start` on free ports and a temporary --temp-dir, one at a time,
and stopped by killing its own processes by pid (never `ray stop`: it stops every Ray cluster of
the machine). Runs are interleaved repeat by repeat so drift spreads over every setting; medians.
Other processes on the machine (tests, other clusters) make the absolute figures noisy: read the
ratios, taken within this one run.

    python benchmarks/ray_throughput.py [--repeats 2] [--items 40] [--suite tasks/demo]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
EVALKIT, RAY = str(BIN / "evalkit"), str(BIN / "ray")
RAY_ENV = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
NODE_FLAGS = ["--num-cpus", "1", "--object-store-memory", "80000000", "--disable-usage-stats"]


def median(values) -> float:
    return statistics.median(list(values))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


class RayCluster:
    """`nodes` Ray nodes of `slots` sandboxes each on this machine, under a temp dir of our own."""

    def __init__(self, nodes: int, slots: int, tmp: Path) -> None:
        self.nodes, self.slots = nodes, slots
        self.temp_dir = tmp / f"ray-{secrets.token_hex(3)}"
        self.address = ""

    def __enter__(self) -> RayCluster:
        import ray

        port = free_port()
        self.address = f"{ray.util.get_node_ip_address()}:{port}"
        head = ["--head", "--port", str(port), "--temp-dir", str(self.temp_dir), "--include-dashboard=false"]
        try:
            self._start(*head, "--resources", json.dumps({"sandbox": self.slots}))
            for n in range(1, self.nodes):
                self._start("--address", self.address, "--resources", json.dumps({"sandbox": self.slots, f"n{n}": 1}))
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self, *args: str) -> None:
        done = subprocess.run([RAY, "start", *args, *NODE_FLAGS], capture_output=True, text=True, env=RAY_ENV)
        if done.returncode != 0:
            raise SystemExit(f"`ray start {' '.join(args)}` failed:\n{done.stderr[-2000:]}")

    def pids(self) -> list[int]:
        """Our cluster's processes: those whose command line or open files name our temp dir (Ray's
        agents and workers rename themselves `ray::...` but keep their logs there open)."""
        return owned_pids(str(self.temp_dir))

    def stop(self) -> None:
        for _ in range(40):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.25)
        print(f"warning: processes of {self.temp_dir} still there: {self.pids()}")

    def __exit__(self, *exc) -> None:
        self.stop()


def owned_pids(mark: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if mark.encode() in (entry / "cmdline").read_bytes() or any(
                os.readlink(fd).startswith(mark) for fd in (entry / "fd").iterdir()
            ):
                found.append(int(entry.name))
        except OSError:  # gone meanwhile, or not ours to read
            pass
    return found


@dataclass
class Run:
    label: str
    wall_s: float
    durations: list[float]
    nodes: int
    first_s: float  # from launch to the first row, less that attempt's own duration

    @property
    def attempts(self) -> int:
        return len(self.durations)

    def per_minute(self) -> float:
        return self.attempts / (self.wall_s / 60)

    def outside_s(self) -> float:
        """Per attempt: the run's wall time not spent inside its attempts (meaningful at concurrency 1)."""
        return (self.wall_s - sum(self.durations)) / self.attempts


def evalkit_run(label: str, suite: Path, out: Path, concurrency: int, *extra: str) -> Run:
    run_id = f"raybench-{''.join(c if c.isalnum() else '-' for c in label)}-{secrets.token_hex(3)}"
    command = [EVALKIT, "run", "--suite", str(suite), "--model", "oracle", "--run-id", run_id, "--out", str(out)]
    command += ["--concurrency", str(concurrency), *extra]
    launched, started = datetime.now(UTC), time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=RAY_ENV)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"`{' '.join(command)}` failed ({done.returncode}):\n{done.stderr[-2000:]}")
    rows = [json.loads(line) for line in (out / run_id / "results.jsonl").read_text().splitlines() if line.strip()]
    bad = [r["task_id"] for r in rows if not r["resolved"] or r.get("error")]
    if bad:
        print(f"warning: {run_id}: unresolved or failed: {bad}")
    nodes = len({r.get("node") for r in rows if r.get("node")})
    first = min(rows, key=lambda r: r["finished_at"])
    first_s = (datetime.fromisoformat(first["finished_at"]) - launched).total_seconds() - first["duration_s"]
    return Run(label, wall, [r["duration_s"] for r in rows], nodes, first_s)


# -- 2. dispatch of a trivial job ------------------------------------------------------------------
def echo(item: int) -> int:
    return item


def dispatch_s(executor, items: int, backend) -> float:
    """Seconds for `items` trivial jobs through `executor.run`, one at a time."""
    got: list[int] = []
    started = time.perf_counter()
    executor.run(
        range(items), echo, backend=backend, concurrency=1,
        on_result=lambda item, result: got.append(result), on_error=lambda item, error: sys.exit(f"{error}"),
    )  # fmt: skip
    elapsed = time.perf_counter() - started
    if sorted(got) != list(range(items)):
        sys.exit(f"dispatch: {len(got)} of {items} results")
    return elapsed


def measure_dispatch(cluster: RayCluster, items: int, samples: dict[str, list[float]]) -> None:
    """On a fresh cluster: the first trivial job (cold worker), then `items` warm ones, each way."""
    import ray

    from evalkit.runs.local_executor import LocalExecutor
    from evalkit.runs.ray_executor import RayExecutor

    ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
    try:
        executor = RayExecutor(ray, cluster.address)
        samples["ray cold"].append(dispatch_s(executor, 1, None))
        samples["ray"].append(dispatch_s(executor, items, None) / items)
        samples["thread pool"].append(dispatch_s(LocalExecutor(), items, None) / items)
    finally:
        ray.shutdown()


def backend_open_s(times: int) -> float:
    """What a node attempt does before anything else: open (and close) its own Docker backend."""
    from evalkit.sandbox.backend_table import DEFAULT_BACKEND, open_backend

    spent = []
    for _ in range(times):
        started = time.perf_counter()
        open_backend(DEFAULT_BACKEND, f"raybench-open-{secrets.token_hex(3)}").close()
        spent.append(time.perf_counter() - started)
    return median(spent)


# -- main --------------------------------------------------------------------------------------
def print_throughput(runs: list[Run], n_tasks: int, repeats: int) -> None:
    print(f"\n1. Tasks per minute, `evalkit run --model oracle` on {n_tasks} tasks (medians of {repeats} run(s))")
    print(
        f"{'setting':26} {'wall s':>7} {'tasks/min':>10} {'nodes used':>10} {'attempt s':>10} {'first row s':>12}"
        f" {'outside/attempt':>16}"
    )
    labels = list(dict.fromkeys(r.label for r in runs))
    rate = {}
    for label in labels:
        group = [r for r in runs if r.label == label]
        rate[label] = median(r.per_minute() for r in group)
        outside = f"{median(r.outside_s() for r in group):13.2f} s" if " c1" in label or "1 node" in label else ""
        print(
            f"{label:26} {median(r.wall_s for r in group):7.1f} {rate[label]:10.1f}"
            f" {max(r.nodes for r in group) or '-':>10} {median(d for r in group for d in r.durations):8.2f} s"
            f" {median(r.first_s for r in group):10.1f} s {outside:>16}"
        )
    ray1, ray2 = rate["ray 1 node x 1 sandbox"], rate["ray 2 nodes x 1 sandbox"]
    local1, local2 = rate["local c1"], rate["local c2"]
    print(f"ratio ray 2 nodes / 1 node:        {ray2 / ray1:.2f}x   (issue target >= 1.7x on separate machines)")
    print(f"ratio local c2 / c1 (same cores):  {local2 / local1:.2f}x")
    print(f"ratio ray 1 node / local c1:       {ray1 / local1:.2f}x;  ray 2 nodes / local c2: {ray2 / local2:.2f}x")
    print(f"ratio ray 1 node / local c1 no pool: {ray1 / rate['local c1 no pool']:.2f}x  (a Ray node has no pool)")
    print("(wall = the `evalkit run` process, start-up, Ray connect and scoring included; attempt = a row's")
    print(" duration_s, median over every attempt of the setting; first row = from launch")
    print(" to the first row less its attempt's duration_s (start-up, cold Ray worker; rows' clock has 1 s steps);")
    print(" outside/attempt = (wall - sum of the rows' duration_s) / attempts, one attempt at a time)")


def print_dispatch(samples: dict[str, list[float]], items: int, open_s: float) -> None:
    ray_ms, pool_ms = median(samples["ray"]) * 1000, median(samples["thread pool"]) * 1000
    print(f"\n2. Dispatch of a trivial job, one at a time ({items} items per sample, {len(samples['ray'])} samples)")
    print(f"{'RayExecutor.run':34} {ray_ms:8.2f} ms per item")
    print(f"{'LocalExecutor.run (thread pool)':34} {pool_ms:8.2f} ms per item")
    print(f"{'difference':34} {ray_ms - pool_ms:8.2f} ms per item  (ratio {ray_ms / pool_ms:.0f}x)")
    print(f"{'first item on a fresh cluster':34} {median(samples['ray cold']) * 1000:8.0f} ms  (cold worker process)")
    print(
        f"{'a node opening its Docker backend':34} {open_s * 1000:8.0f} ms per attempt  (connect + sweep on the node)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suite", type=Path, default=ROOT / "tasks" / "demo")
    parser.add_argument("--repeats", type=int, default=2, help="runs of the suite per setting")
    parser.add_argument("--items", type=int, default=40, help="trivial jobs per dispatch sample")
    args = parser.parse_args()
    try:
        import ray  # noqa: F401
    except ImportError:
        sys.exit("Ray is not installed: make ray (pip install -e '.[ray]')")
    from evalkit.tasks import load_suite

    n_tasks = len(load_suite(args.suite).tasks)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"Ray executor throughput: suite {args.suite.name} ({n_tasks} tasks), oracle, {args.repeats} repeat(s);"
        f" {os.cpu_count()} cores, load average at start {load}; ray {__import__('ray').__version__}"
    )
    print("(every Ray node runs on this one machine and shares its cores; other processes add noise)")
    started = time.perf_counter()
    runs: list[Run] = []
    samples: dict[str, list[float]] = {"ray cold": [], "ray": [], "thread pool": []}
    with tempfile.TemporaryDirectory(prefix="evalkit-raybench-") as name:
        tmp = Path(name)
        out = tmp / "runs"
        for _ in range(args.repeats):
            with RayCluster(1, 1, tmp) as cluster:
                measure_dispatch(cluster, args.items, samples)
                runs.append(evalkit_run("ray 1 node x 1 sandbox", args.suite, out, 1, "--executor", "ray",
                                        "--ray-address", cluster.address))  # fmt: skip
            with RayCluster(2, 1, tmp) as cluster:
                runs.append(evalkit_run("ray 2 nodes x 1 sandbox", args.suite, out, 2, "--executor", "ray",
                                        "--ray-address", cluster.address))  # fmt: skip
            runs.append(evalkit_run("local c1", args.suite, out, 1))
            runs.append(evalkit_run("local c2", args.suite, out, 2))
            runs.append(evalkit_run("local c1 no pool", args.suite, out, 1, "--no-pool"))
        open_s = backend_open_s(5)
    print_throughput(runs, n_tasks, args.repeats)
    print_dispatch(samples, args.items, open_s)
    print(f"\ntotal {time.perf_counter() - started:.0f} s; load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
