class KVError(Exception):
    """Base class for all kvstore errors."""


class InvalidKey(KVError):
    """Keys must be non-empty strings of at most MAX_KEY_LENGTH characters."""


class CorruptLogError(KVError):
    """A record in the log file could not be decoded."""

    def __init__(self, message: str, lineno: int):
        super().__init__(f"line {lineno}: {message}")
        self.lineno = lineno
