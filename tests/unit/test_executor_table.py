"""`--executor NAME` goes through the executor table: the local thread pool is the default and runs the
demo as before; an unknown name, or `ray` on a machine without Ray, is one line (exit 2, nothing
written); naming an executor loads no cluster library."""

import os
import subprocess
import sys
from functools import partial

import pytest
from conftest import DEMO_SUITE, EVALKIT, run_evalkit

from evalkit.errors import EvalkitError
from evalkit.runs.executor_table import DEFAULT_EXECUTOR, EXECUTORS, open_executor
from evalkit.runs.local_executor import LocalExecutor

evalkit = partial(run_evalkit, timeout=120)


def test_an_unknown_executor_is_one_line_naming_the_known_ones(tmp_path):
    out = tmp_path / "runs"
    result = evalkit("run", "-m", "oracle", "--suite", DEMO_SUITE, "--out", out, "--executor", "slurm")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == ["error: unknown executor 'slurm'; known executors: local, ray"]
    assert not out.exists()


def test_ray_without_ray_installed_is_one_line_saying_how_to_install_it(tmp_path):
    shadow = tmp_path / "shadow" / "ray"  # a `ray` that cannot be imported, as on a machine without it
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'ray'\")\n")
    out = tmp_path / "runs"
    command = [str(EVALKIT), "run", "-m", "oracle", "--suite", str(DEMO_SUITE)]
    command += ["--out", str(out), "--executor", "ray", "--no-preflight"]
    env = {**os.environ, "PYTHONPATH": str(shadow.parent)}
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    line = "error: --executor ray: Ray is not installed; install it with pip install 'evalkit[ray]'"
    assert result.stderr.strip().splitlines() == [line]
    assert not out.exists()


def test_a_ray_address_without_the_ray_executor_is_refused():
    with pytest.raises(EvalkitError, match="--ray-address ray://head:10001: give it with --executor ray"):
        open_executor("local", "ray://head:10001")


def test_the_default_is_the_local_thread_pool():
    assert DEFAULT_EXECUTOR == "local" and isinstance(open_executor(DEFAULT_EXECUTOR), LocalExecutor)
    assert set(EXECUTORS) == {"local", "ray"}


def test_the_local_executor_runs_every_item_and_reports_each():
    results: dict[int, int] = {}

    class NoContainers:
        def close(self) -> int:
            return 0

    LocalExecutor().run(
        range(5),
        lambda item: item * item,
        backend=NoContainers(),
        concurrency=2,
        on_result=lambda item, result: results.__setitem__(item, result),
        on_error=lambda item, error: pytest.fail(f"{item}: {error}"),
    )
    assert results == {0: 0, 1: 1, 2: 4, 3: 9, 4: 16}


def test_naming_an_executor_loads_no_cluster_library():
    probe = "import sys, evalkit.runs.executor_table, evalkit.cli.common; print('ray' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == "False", result.stdout + result.stderr
