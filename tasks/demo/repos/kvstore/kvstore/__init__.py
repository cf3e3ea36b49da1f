"""A tiny append-only, log-structured key-value store."""

from .errors import CorruptLogError, InvalidKey, KVError
from .store import Store

__all__ = ["CorruptLogError", "InvalidKey", "KVError", "Store"]
