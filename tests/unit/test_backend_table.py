"""`--backend NAME` goes through the backend table: an unknown name is one line naming the known
backends (exit 2, nothing written), every row names a class that can be opened, and naming a
backend loads no heavy library (the docker backend loads docker only when it is opened)."""

import importlib
import subprocess
import sys
from functools import partial

import pytest
from conftest import DEMO_SUITE, run_evalkit

from evalkit.errors import EvalkitError
from evalkit.sandbox.backend_table import BACKENDS, DEFAULT_BACKEND, check_backend_name, open_backend

evalkit = partial(run_evalkit, timeout=120)


@pytest.mark.parametrize("command", [["run", "-m", "oracle", "--suite"], ["tasks", "validate"]])
def test_an_unknown_backend_is_one_line_naming_the_known_ones(command, tmp_path):
    out = tmp_path / "runs"
    result = evalkit(*command, DEMO_SUITE, "--backend", "podman", *(["--out", out] if command[0] == "run" else []))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == ["error: unknown backend 'podman'; known backends: docker"]
    assert not out.exists()


def test_open_backend_refuses_an_unknown_name_before_importing_anything():
    with pytest.raises(EvalkitError, match="known backends: docker"):
        open_backend("podman", "run-1")
    assert check_backend_name(DEFAULT_BACKEND) == "docker"


@pytest.mark.parametrize("name", sorted(BACKENDS))
def test_every_row_names_a_backend_class_meeting_the_core(name):
    module_name, class_name = BACKENDS[name]
    backend_class = getattr(importlib.import_module(module_name), class_name)
    for operation in ("connect", "open", "workspace", "close"):  # the core of protocol.py
        assert callable(getattr(backend_class, operation)), f"{name}: {class_name}.{operation}"


def test_the_table_loads_no_backend_library():
    probe = "import sys, evalkit.sandbox.backend_table; print(*(m for m in ('docker', 'requests') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == "", result.stdout + result.stderr


def test_the_docker_backend_without_its_sdk_is_one_line_with_the_install_hint():
    probe = (
        "import sys; sys.modules['docker'] = None\n"  # as if the Docker SDK were not installed
        "from evalkit.errors import SandboxError\n"
        "from evalkit.sandbox.backend_table import open_backend\n"
        "try:\n    open_backend('docker', 'run-1')\nexcept SandboxError as exc:\n    print(exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.stdout.splitlines() == ["the docker backend needs the Docker SDK: pip install 'docker>=7.1'"]
