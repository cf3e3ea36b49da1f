"""Errors a user can act on: one line saying what, where and what to do."""


class EvalkitError(Exception):
    """A problem with the user's input or environment; the CLI prints it as one line, no traceback."""


class SandboxError(EvalkitError):
    """The sandbox backend failed (engine gone, image missing, container removed)."""
