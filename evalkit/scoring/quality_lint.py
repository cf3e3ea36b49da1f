"""ruff for the quality axis: findings per file and rule code (with their lines), for file contents.

The rules read one file at a time: its text and its name (`__init__.py` is
treated apart), never its neighbours. So the files of many changes, written side by side (two
files of the same path in two trees), give in one ruff run the findings each gives alone, and a
file's findings can be kept by (path, content): a run scores many changes over the same base
files, and a ruff start-up costs more than linting a file.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

RUFF_ARGS = ("--isolated", "--no-cache", "--exit-zero", "--output-format", "json")
# Defects (pycodestyle's statement and runtime errors, pyflakes, bugbear, blind and silent excepts,
# unused arguments, placeholders and returns that do nothing, `else` of a loop with no `break`,
# comparisons of constants, an `if` whose arms are the same),
# commented-out code (eradicate), hack markers (flake8-fixme: TODO, FIXME, XXX, HACK) and
# readability (lines over 120 columns, trailing whitespace, functions of cyclomatic complexity
# over 10). `quality.py` sorts them into parts.
RUFF_RULES = (
    "--select",
    "E4,E7,E9,F,B,BLE001,S110,S112,ARG001,ARG002,PIE790,PIE794,PLR1711,PLW0120,PLR0133,RUF034,FIX,ERA001,E501,W291,W293,C901",
    "--line-length",
    "120",
    "--config",
    "lint.mccabe.max-complexity = 10",
    "--target-version",
    "py311",
)
FILES_PER_RUN = 1000  # keeps the command line well under the system's limit

_RULE_CODE = re.compile(r"[A-Z]+[0-9]+")


class RuffUnavailable(Exception):
    """No ruff to run, or it failed: the lint part is skipped rather than guessed."""


def run_tool(command: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run a tool in `cwd`, with no git variables inherited that could point it at another repository."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        # a diff of files that are not UTF-8 arrives with surrogate escapes: its bytes go back as read
        data = None if stdin is None else stdin.encode("utf-8", "surrogateescape")
        done = subprocess.run(command, cwd=cwd, input=data, capture_output=True, env=env, timeout=120)
        out, err = (part.decode("utf-8", "replace") for part in (done.stdout, done.stderr))
        return subprocess.CompletedProcess(command, done.returncode, out, err)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(command, 127, "", str(exc))


def ruff_command() -> list[str] | None:
    """The ruff next to this interpreter (no Python start-up), else its module, else ruff on PATH."""
    beside = Path(sys.executable).parent / "ruff"
    if beside.is_file():
        return [str(beside)]
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    found = shutil.which("ruff")
    return [found] if found else None


class Linter:
    """ruff's findings per (path, content), each linted once for as long as the Linter lives."""

    def __init__(self) -> None:
        self._known: dict[tuple[str, bytes], list[RuffFinding]] = {}

    def counts(self, files: Mapping[str, bytes]) -> dict[str, Counter[str]]:
        """Findings per rule code of each of `files` (path -> content); those not seen before are
        linted in one ruff run. `RuffUnavailable` when there is no ruff or it fails."""
        self.lint(files.items())
        return {path: Counter(f.code for f in self._known[(path, text)]) for path, text in files.items()}

    def findings(self, path: str, text: bytes) -> list[RuffFinding]:
        """The findings of one file (linted already, or now)."""
        self.lint([(path, text)])
        return self._known[(path, text)]

    def lint(self, files: Iterable[tuple[str, bytes]]) -> None:
        """Lint those of `files` (path, content) not linted yet, `FILES_PER_RUN` to a ruff run."""
        todo = list(dict.fromkeys(key for key in files if key not in self._known))
        for start in range(0, len(todo), FILES_PER_RUN):
            self._known.update(_ruff_counts(todo[start : start + FILES_PER_RUN]))


@dataclass(frozen=True)
class RuffFinding:
    code: str
    line: int
    message: str


def _ruff_counts(files: list[tuple[str, bytes]]) -> dict[tuple[str, bytes], list[RuffFinding]]:
    """One ruff run over `files` in a throw-away folder: each as `<n>/<path>`, n counting the
    earlier files of the same path (so one change's after and before files make two trees)."""
    ruff = ruff_command()
    if ruff is None:
        raise RuffUnavailable("ruff not available")
    with tempfile.TemporaryDirectory(prefix="evalkit-lint-") as tmp:
        root = Path(tmp).resolve()
        where: dict[str, tuple[str, bytes]] = {}
        taken: Counter[str] = Counter()
        for path, text in files:
            name = f"{taken[path]}/{path}"
            taken[path] += 1
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(text)
            where[name] = (path, text)
        done = run_tool([*ruff, "check", *RUFF_ARGS, *RUFF_RULES, "--", *where], root)
        try:
            findings = json.loads(done.stdout) if done.returncode == 0 else None
        except json.JSONDecodeError:
            findings = None
        if not isinstance(findings, list):
            raise RuffUnavailable(f"ruff failed ({done.stderr.strip()[:200] or f'exit {done.returncode}'})")
        counts: dict[tuple[str, bytes], list[RuffFinding]] = {key: [] for key in files}
        for finding in findings:
            code = finding.get("code") or ""
            if _RULE_CODE.fullmatch(code) and code != "E999":  # syntax errors come from ast, not ruff
                name = Path(finding["filename"]).resolve().relative_to(root).as_posix()
                line = (finding.get("location") or {}).get("row") or 0
                counts[where[name]].append(RuffFinding(code, int(line), str(finding.get("message") or "")))
    return counts
