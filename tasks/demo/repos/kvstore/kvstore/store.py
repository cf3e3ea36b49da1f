"""The Store: an in-memory index rebuilt by replaying an append-only log."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import InvalidKey, KVError
from .record import DELETE, SET, Record

MAX_KEY_LENGTH = 256
_MISSING = object()


def validate_key(key: Any) -> str:
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_LENGTH:
        raise InvalidKey(f"invalid key: {key!r}")
    return key


class Store:
    """A persistent dict of string keys to JSON values.

    Every change is appended to the log at ``path``; opening a store replays
    the log. ``compact()`` rewrites the log with only the live keys.
    """

    def __init__(self, path: str | os.PathLike, *, fsync: bool = False) -> None:
        self.path = Path(path)
        self.fsync = fsync
        self._data: dict[str, Any] = {}
        self._records = 0
        self._replay()
        self._fh = open(self.path, "a", encoding="utf-8")

    # -- log handling ---------------------------------------------------

    def _replay(self) -> None:
        try:
            fh = open(self.path, encoding="utf-8")
        except FileNotFoundError:
            return
        with fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                self._apply(Record.from_line(line, lineno))
                self._records += 1

    def _apply(self, record: Record) -> None:
        if record.op == SET:
            self._data[record.key] = record.value
        else:
            self._data.pop(record.key, None)

    def _write(self, record: Record) -> None:
        if self._fh.closed:
            raise KVError("store is closed")
        line = record.to_line()
        self._fh.write(line + "\n")
        self._fh.flush()
        if self.fsync:
            os.fsync(self._fh.fileno())
        self._records += 1
        self._apply(record)

    # -- mapping API ----------------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(validate_key(key), default)

    def set(self, key: str, value: Any) -> None:
        self._write(Record(SET, validate_key(key), value))

    def delete(self, key: str) -> bool:
        """Remove a key; returns False if it was not present."""
        if validate_key(key) not in self._data:
            return False
        self._write(Record(DELETE, key))
        return True

    def __getitem__(self, key: str) -> Any:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        self.set(key, value)

    def __delitem__(self, key: str) -> None:
        if not self.delete(key):
            raise KeyError(key)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def keys(self, prefix: str = "") -> list[str]:
        return sorted(k for k in self._data if k.startswith(prefix))

    def items(self, prefix: str = "") -> list[tuple[str, Any]]:
        return [(k, self._data[k]) for k in self.keys(prefix)]

    # -- maintenance ----------------------------------------------------

    def compact(self) -> int:
        """Rewrite the log with one record per live key; returns records dropped."""
        if self._fh.closed:
            raise KVError("store is closed")
        self._fh.close()
        with open(self.path, "w", encoding="utf-8") as fh:
            for key in sorted(self._data):
                fh.write(Record(SET, key, self._data[key]).to_line() + "\n")
        dropped = self._records - len(self._data)
        self._records = len(self._data)
        self._fh = open(self.path, "a", encoding="utf-8")
        return dropped

    @property
    def closed(self) -> bool:
        return self._fh.closed

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
