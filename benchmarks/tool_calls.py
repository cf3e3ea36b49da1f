"""Latency of each agent tool call (ToolBox.run, as the agent loop makes it) in one real sandbox of
the demo suite, next to a plain `docker exec` doing the same work (the archive API for the 100 kB write,
too long for a command line) in the same container and run.
Prints medians and the ratio; `--profile` adds a cProfile of the host side of each call.

    python benchmarks/tool_calls.py [--repeats 50] [--docker-repeats 10] [--profile]
"""

from __future__ import annotations

import argparse
import base64
import cProfile
import io
import json
import pstats
import shlex
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from evalkit.agent.tools import ToolBox
from evalkit.sandbox.docker.backend import DockerBackend, docker_client
from evalkit.sandbox.docker.docker_sandbox import DockerSandbox
from evalkit.sandbox.workspace import tar_single_file
from evalkit.tasks import load_suite

ROOT = Path(__file__).resolve().parents[1]
SMALL = "x = 1\n" * 20  # 120 bytes
LARGE = ("# " + "y" * 97 + "\n") * 1000  # 100 kB


def median_ms(call: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def tool(tools: ToolBox, name: str, **arguments: object) -> Callable[[], None]:
    raw = json.dumps(arguments)

    def call() -> None:
        outcome = tools.run(name, raw)
        if outcome.fault is not None:
            raise SystemExit(f"{name} failed: {outcome.content[:300]}")

    return call


def plain(box: DockerSandbox, command: str) -> Callable[[], None]:
    def call() -> None:
        result = box.docker_exec(command)
        if result.exit_code not in (0, 1):
            raise SystemExit(f"docker exec failed: {result.stderr[:300]}")

    return call


def cases(tools: ToolBox, box: DockerSandbox) -> list[tuple[str, Callable[[], None], Callable[[], None]]]:
    """(label, the tool call, the same work as one plain `docker exec`)."""
    wd = box.workdir

    def write_plain(name: str, text: str) -> Callable[[], None]:
        encoded = base64.b64encode(text.encode()).decode()
        return plain(box, f"cd {wd} && printf %s {encoded} | base64 -d > {name}")

    def put_archive(text: str) -> Callable[[], None]:  # too long for one command line: the archive API
        return lambda: box.copy_in(tar_single_file("w2.py", text.encode()), f"{wd}/bench")

    flip = iter(range(10**9))

    def edit() -> None:  # alternate between two texts so every call changes the file
        old, new = ("x = 1", "x = 2") if next(flip) % 2 == 0 else ("x = 2", "x = 1")
        tool(tools, "edit", path="bench/edit.py", old_string=f"{old}\nend", new_string=f"{new}\nend")()

    return [
        ("read_file (120 B)", tool(tools, "read_file", path="bench/small.py"), plain(box, f"cat {wd}/bench/small.py")),
        ("read_file (100 kB)", tool(tools, "read_file", path="bench/large.py"), plain(box, f"cat {wd}/bench/large.py")),
        (
            "write_file (120 B)",
            tool(tools, "write_file", path="bench/w1.py", content=SMALL),
            write_plain("w1.py", SMALL),
        ),
        ("write_file (100 kB)", tool(tools, "write_file", path="bench/w2.py", content=LARGE), put_archive(LARGE)),
        ("edit (120 B file)", edit, plain(box, f"cd {wd} && sed -i 's/^x = 1$/x = 1/' bench/edit.py")),
        ("bash `true`", tool(tools, "bash", command="true"), plain(box, "true")),
        ("bash `git status`", tool(tools, "bash", command="git status --short"), plain(box, f"cd {wd} && git status")),
        ("search", tool(tools, "search", pattern="def "), plain(box, f"cd {wd} && rg -n --no-heading -e 'def '")),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--docker-repeats", type=int, default=10)
    parser.add_argument("--profile", action="store_true", help="print the host-side cProfile of each tool call")
    args = parser.parse_args()
    task = load_suite(ROOT / "tasks" / "demo").tasks[0]
    backend = DockerBackend(docker_client(), run_id="bench-tool-calls")
    rows = []
    try:
        with backend.open(task, role="bench") as box:
            assert isinstance(box, DockerSandbox)
            tools = ToolBox(box, command_timeout_s=60, output_limit=200_000)
            setup = f"mkdir -p bench && printf '%s' {shlex.quote(SMALL + 'end')} > bench/edit.py"
            box.exec(setup)
            tool(tools, "write_file", path="bench/small.py", content=SMALL)()
            tool(tools, "write_file", path="bench/large.py", content=LARGE)()
            for label, call, baseline in cases(tools, box):
                call()  # warm up (the first call starts the command server)
                profiler = cProfile.Profile() if args.profile else None
                if profiler:
                    profiler.enable()
                ms = median_ms(call, args.repeats)
                if profiler:
                    profiler.disable()
                    out = io.StringIO()
                    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(8)
                    print(f"== {label}\n{out.getvalue()}")
                rows.append((label, ms, median_ms(baseline, args.docker_repeats)))
    finally:
        backend.close()
    print(f"{'tool call':22} {'evalkit':>10} {'docker exec':>12} {'ratio':>7}")
    for label, ms, base in rows:
        print(f"{label:22} {ms:7.2f} ms {base:9.1f} ms {ms / base:7.3f}")
    print(f"(medians of {args.repeats} tool calls and {args.docker_repeats} docker execs, one sandbox, one run)")


if __name__ == "__main__":
    main()
