"""Log records. The log is a text file holding one JSON object per line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .errors import CorruptLogError, KVError

SET = "set"
DELETE = "del"
OPS = (SET, DELETE)


@dataclass(frozen=True)
class Record:
    op: str
    key: str
    value: Any = None

    def to_line(self) -> str:
        data: dict[str, Any] = {"op": self.op, "k": self.key}
        if self.op == SET:
            data["v"] = self.value
        try:
            return json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise KVError(f"value for {self.key!r} is not JSON-serializable: {exc}") from None

    @classmethod
    def from_line(cls, line: str, lineno: int) -> Record:
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorruptLogError(f"undecodable record ({exc.msg})", lineno) from None
        if (
            not isinstance(data, dict)
            or data.get("op") not in OPS
            or not isinstance(data.get("k"), str)
            or (data["op"] == SET and "v" not in data)
        ):
            raise CorruptLogError("malformed record", lineno)
        return cls(data["op"], data["k"], data.get("v"))
