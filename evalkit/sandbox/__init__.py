"""Sandboxes: the `Sandbox` protocol and the `SandboxBackend` core with its optional capabilities
(protocol.py), the backends by name (backend_table.py), and what every backend shares (workspaces,
the command server and its channel, egress, recipes, the engine watch, the pool). The Docker
backend is the `docker` subpackage, imported only when it is opened.

Nothing is imported here, so `evalkit.sandbox.backend_table` stays light: the command line
resolves `--backend NAME` without loading docker."""
