"""Names that become paths, and files written whole: the file helpers every layer uses.

Run ids are checked, model names and task ids are mapped.

A run id names a folder the user will type again, so a bad one is refused rather than changed.
A model name (`openai/gpt-4o`, `replay:runs/x/a.jsonl`) or a task id comes from a config or a
data file and must be kept as written in the records, so it is mapped to a safe file-name
component instead: one function, `file_component`, used everywhere such a name becomes a file or
folder name. A name that had to be changed gets a short hash of the original, so two names never
share a component.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from pathlib import Path

from evalkit.errors import EvalkitError

MAX_NAME = 100
_SAFE = re.compile(r"[A-Za-z0-9._-]+")
_HASHED = re.compile(r".*--[0-9a-f]{8}")  # what `file_component` appends; a name kept as is never ends so
RUN_ID_RULE = f"1-{MAX_NAME} letters, digits, `.`, `_` or `-` (not `.` or `..`)"


def is_safe_name(name: str) -> bool:
    """True when `name` can be a file or folder name as it is (and cannot climb out of its folder)."""
    return len(name) <= MAX_NAME and _SAFE.fullmatch(name) is not None and name not in (".", "..")


def check_run_id(run_id: str, option: str = "--run-id") -> str:
    """`run_id` unchanged, or a one-line error naming the option and what is allowed."""
    if not is_safe_name(run_id):
        raise EvalkitError(f"{option} {run_id!r}: a run id is {RUN_ID_RULE}")
    return run_id


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:8]


def file_component(name: str) -> str:
    """`name` as one file-name component: itself when safe, else a readable slug (each run of other
    characters as `_`) plus `--` and a hash of the name. Different names never map alike."""
    if is_safe_name(name) and not _HASHED.fullmatch(name):
        return name
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip(".")[:60] or "_"
    return f"{slug}--{_digest(name)}"


def attempt_file_name(task_id: str, model: str, sample: int, suffix: str = ".jsonl") -> str:
    """`<task>__<model>__<sample><suffix>`, read back from the right. A model part with `__` in it
    (or a leading `_`) would make that ambiguous (task `a__b` + model `c`, task `a` + model `b__c`),
    so a hash of all three is appended then."""
    model_part = file_component(model)
    name = f"{file_component(task_id)}__{model_part}__{sample}"
    if "__" in model_part or model_part.startswith("_"):
        name += f"--{_digest(task_id, model, str(sample))}"
    return name + suffix


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write a file so that a reader never sees half of it, with the permissions the umask gives
    (tempfile's would be 0600, unreadable to the group that shares the results)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8") if isinstance(text, str) else text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_lines(path: Path) -> list[str]:
    """The lines of a JSON Lines file (UTF-8), split at `\n` only: JSON writers leave U+2028 and
    U+0085 unescaped, which `str.splitlines` would take for line ends."""
    return path.read_bytes().decode("utf-8").split("\n")


def append_line(path: Path, line: str) -> None:
    """Append one line with a single `write` on an O_APPEND descriptor, fsynced: a kill loses at
    most this line, and leaves it cut short rather than interleaved (`cut_partial_line` drops it)."""
    data = (line.rstrip("\n") + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)  # the umask decides
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def cut_partial_line(path: Path) -> None:
    """Drop a last line a killed writer left half-written (no final newline)."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)
