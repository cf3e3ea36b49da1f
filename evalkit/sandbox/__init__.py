"""Sandboxes: the `Sandbox` and `SandboxBackend` protocols (protocol.py), the backends by name
(registry.py), the Docker backend (backend.py, docker_sandbox.py), images and container clean-up.

Nothing is imported here, so `evalkit.sandbox.registry` stays light: the command line resolves
`--backend NAME` without loading docker."""
