"""Latency of one sandbox command through the persistent command server, next to a plain
`docker exec` of the same command in the same container and run. Prints medians and the ratio.

    python benchmarks/sandbox_exec.py [--repeats 200] [--docker-repeats 30]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from toy import write_toy_suite  # noqa: E402

from evalkit.sandbox.docker.backend import DockerBackend, docker_client  # noqa: E402
from evalkit.tasks import load_suite  # noqa: E402


def timed(call, repeats: int) -> list[float]:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=200)
    parser.add_argument("--docker-repeats", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        task = load_suite(write_toy_suite(Path(tmp))).tasks[0]
        backend = DockerBackend(docker_client(), run_id="bench-sandbox-exec")
        try:
            with backend.open(task, role="bench") as box:
                box.exec("true")  # start the command server outside the measurement
                rows = []
                for label, command in (("builtin (true)", "true"), ("process (git status)", "git status --short")):
                    shell = statistics.median(timed(lambda c=command: box.exec(c), args.repeats))
                    plain = statistics.median(timed(lambda c=command: box.docker_exec(c), args.docker_repeats))
                    rows.append((label, shell, plain))
        finally:
            backend.close()
    print(f"{'command':24} {'persistent shell':>18} {'docker exec':>14} {'ratio':>8}")
    for label, shell, plain in rows:
        print(f"{label:24} {shell * 1000:15.3f} ms {plain * 1000:11.1f} ms {shell / plain:8.4f}")
    print(
        f"(medians; {args.repeats} persistent-shell and {args.docker_repeats} docker-exec repeats;"
        " target ratio <= 0.05)"
    )


if __name__ == "__main__":
    main()
