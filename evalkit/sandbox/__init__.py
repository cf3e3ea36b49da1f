"""Sandboxes: the `Sandbox` protocol, the Docker implementation, images and container clean-up."""

from evalkit.sandbox.containers import LiveContainers, prune, sweep_orphans
from evalkit.sandbox.docker_sandbox import DockerSandbox, SandboxSpec
from evalkit.sandbox.protocol import ExecResult, Sandbox
from evalkit.sandbox.workspace import Workspace, build_workspace

__all__ = [
    "DockerSandbox",
    "ExecResult",
    "LiveContainers",
    "Sandbox",
    "SandboxSpec",
    "Workspace",
    "build_workspace",
    "prune",
    "sweep_orphans",
]
