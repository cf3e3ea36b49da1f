"""A Docker engine of the test's own, to stop and start again without touching the shared one.

`PrivateEngine` runs a second dockerd with its own data root, exec root (where it starts its own
containerd), pid file and socket, in a network namespace of its own (`unshare --net`), and no
bridge, iptables or ip6tables: evalkit's sandboxes run with networking disabled and the demo
suite's image builds without a network, so nothing needs the default bridge, and the host's
firewall and the shared engine's `docker0` stay untouched. Needs root, `dockerd` and `unshare`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import docker


class PrivateEngine:
    """A dockerd on `unix://<root>/docker.sock`, started, stopped and started again on the same data root."""

    def __init__(self) -> None:
        # a short path: a unix socket's path is limited to 107 bytes
        self.root = Path(tempfile.mkdtemp(prefix="evalkit-engine-", dir="/tmp"))
        self.socket = self.root / "docker.sock"
        self.host = f"unix://{self.socket}"
        self.log = self.root / "dockerd.log"
        self._process: subprocess.Popen | None = None

    @staticmethod
    def unavailable() -> str | None:
        """Why a private engine cannot run here, or None."""
        if os.geteuid() != 0:
            return "a private dockerd needs root"
        if shutil.which("dockerd") is None:
            return "no dockerd on PATH"
        return None

    def client(self) -> docker.DockerClient:
        return docker.DockerClient(base_url=self.host, timeout=120)

    def env(self) -> dict[str, str]:
        """The variables of a process that should use this engine."""
        return {**os.environ, "DOCKER_HOST": self.host}

    def start(self, timeout_s: float = 60) -> None:
        """Start dockerd and return once it answers."""
        # its own network namespace: a dockerd without a bridge deletes any `docker0` link it can see,
        # the shared engine's included (moby's removeDefaultBridgeInterface)
        command = [
            "unshare",
            "--net",
            "dockerd",
            f"--data-root={self.root / 'data'}",
            f"--exec-root={self.root / 'exec'}",
            f"--pidfile={self.root / 'docker.pid'}",
            f"--host={self.host}",
            "--bridge=none",
            "--iptables=false",
            "--ip6tables=false",
        ]
        with self.log.open("ab") as log:
            self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"dockerd exited ({self._process.returncode}): {self.log_tail()}")
            if self.answers():
                return
            time.sleep(0.2)
        raise RuntimeError(f"dockerd did not answer within {timeout_s:.0f} s: {self.log_tail()}")

    def stop(self, timeout_s: float = 60) -> None:
        """SIGTERM dockerd (it stops its containers and its containerd) and wait for it to exit."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout_s)

    def answers(self) -> bool:
        if not self.socket.exists():
            return False
        try:
            client = docker.DockerClient(base_url=self.host, timeout=5)
            try:
                return bool(client.ping())
            finally:
                client.close()
        except (docker.errors.DockerException, OSError):
            return False

    def load_image(self, source: docker.DockerClient, image: str) -> None:
        """Copy an image from another engine (`docker save | docker load`, streamed)."""
        client = self.client()
        try:
            for _ in client.api.load_image(source.api.get_image(image)):
                pass
        finally:
            client.close()

    def containers(self, label: str) -> list[dict]:
        """Every container (running or not) carrying `label` (`key` or `key=value`)."""
        client = self.client()
        try:
            return client.api.containers(all=True, filters={"label": label})
        finally:
            client.close()

    def log_tail(self, lines: int = 20) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:]) if self.log.exists() else ""

    def destroy(self) -> None:
        """Stop the engine, end its containerd if it outlived it, unmount what is left under the root, remove it all."""
        self.stop()
        for pid in self._processes_under_root():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for mount in sorted(self._mounts_under_root(), key=len, reverse=True):
            subprocess.run(["umount", "-l", mount], check=False, capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)

    def _processes_under_root(self) -> list[int]:
        """Processes (containerd, shims) whose command line names this engine's root."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(self.root) in cmdline:
                found.append(int(entry.name))
        return found

    def _mounts_under_root(self) -> list[str]:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
        points = [line.split()[1].replace("\\040", " ") for line in mounts if len(line.split()) > 1]
        return [p for p in points if p == str(self.root) or p.startswith(f"{self.root}/")]
