"""A small style checker built with real git, laid out as a real one was: test modules and the data
files they read live in `testsuite/`, not `tests/`. Commits after the root, oldest first:

    carriage  "Report lone carriage returns"   → task; its data file holds `\\r\\r\\n`, a lone `\\r`,
                                                 `\\x1c`, a form feed and Latin-1 bytes, and its source
                                                 part carries a message file with `\\r\\r\\n` and a Latin-1
                                                 comment (under a coding line)
    length    "Report long lines"              → task
    broken    "Add the release notes"          → a commit whose file's object is missing from the
                                                 repository (as in a partial clone): git cannot diff it,
                                                 so it is rejected with the error, and the scan goes on
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

CHECKER = b'''"""A tiny style checker: codes for the lines of a file's bytes."""


def check(data):
    """Codes as `line:code`, for trailing spaces."""
    codes = []
    for number, line in enumerate(data.split(b"\\n"), 1):
        if line.endswith(b" "):
            codes.append(f"{number}:W291")
    return codes
'''

CHECKER_CARRIAGE = b'''# -*- coding: latin-1 -*-
"""A tiny style checker: codes for the lines of a file's bytes (caf\xe9 edition)."""

MESSAGES = {"W291": "trailing space", "W605": "lone carriage return"}


def _lone_returns(line):
    """Carriage returns not part of a CRLF line end."""
    body = line[:-1] if line.endswith(b"\\r") else line
    return body.count(b"\\r")


def check(data):
    """Codes as `line:code`, for trailing spaces and lone carriage returns."""
    codes = []
    for number, line in enumerate(data.split(b"\\n"), 1):
        if line.rstrip(b"\\r").endswith(b" "):
            codes.append(f"{number}:W291")
        if _lone_returns(line):
            codes.append(f"{number}:W605")
    return codes


def describe(code):
    """The message of a code such as W605."""
    return MESSAGES[code]
'''

CHECKER_LENGTH = CHECKER_CARRIAGE.replace(
    b'MESSAGES = {"W291": "trailing space", "W605": "lone carriage return"}',
    b'MESSAGES = {"W291": "trailing space", "W605": "lone carriage return", "E501": "line too long"}\nMAX_LENGTH = 20',
).replace(
    b"""        if _lone_returns(line):
            codes.append(f"{number}:W605")
""",
    b"""        if _lone_returns(line):
            codes.append(f"{number}:W605")
        if len(line.rstrip(b"\\r")) > MAX_LENGTH:
            codes.append(f"{number}:E501")
""",
)

TESTS = b'''import os

from checker import check

HERE = os.path.dirname(__file__)


def codes_of(name):
    with open(os.path.join(HERE, name), "rb") as handle:
        return check(handle.read())


def test_clean_file_has_no_codes():
    assert codes_of("clean.txt") == []


def test_trailing_space():
    assert check(b"a \\nb\\n") == ["1:W291"]
'''

TESTS_CARRIAGE = TESTS + b'''

def test_lone_carriage_returns_are_reported_and_crlf_is_not():
    assert codes_of("W60.txt") == ["2:W605", "3:W605"]


def test_codes_have_messages():
    from checker import describe

    assert describe("W605") == "lone carriage return"
'''

TESTS_LENGTH = TESTS_CARRIAGE + b'''

def test_long_lines():
    assert codes_of("E50.txt") == ["2:E501"]
'''

# CRLF line (not reported), a lone \r inside a line, the `EMPTY_SET)\r\r\n` that stopped a real
# gather, then separators, a form feed and Latin-1 bytes (none of them a code)
W60_DATA = b"crlf ok\r\nbad\rline\nEMPTY_SET)\r\r\nsep\x1c\x1d\x1e\x0cff\ncaf\xe9\n"
MESSAGES_DATA = b"W605\tlone carriage return\r\r\nW291\ttrailing space\r\n"


def _git(repo: Path, *args: str, date: int = 1) -> str:
    when = f"2026-06-0{date}T12:00:00"
    env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    done = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return done.stdout.decode()


def _commit(repo: Path, files: dict[str, bytes], message: str, date: int) -> str:
    for name, data in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(data)
    _git(repo, "add", "-A", date=date)
    _git(repo, "commit", "--quiet", "-m", message, date=date)
    return _git(repo, "rev-parse", "HEAD").strip()


def build_checker_repo(repo: Path) -> Path:
    repo.mkdir(parents=True)
    _git(repo, "init", "--quiet", "--initial-branch=main")
    _git(repo, "config", "user.email", "dev@example.com")
    _git(repo, "config", "user.name", "Dev")
    _git(repo, "config", "core.autocrlf", "false")
    root = {"checker.py": CHECKER, "testsuite/test_checker.py": TESTS, "testsuite/clean.txt": b"all good\n"}
    _commit(repo, root, "Start the checker", 1)
    _commit(
        repo,
        {
            "checker.py": CHECKER_CARRIAGE,
            "messages.txt": MESSAGES_DATA,
            "testsuite/test_checker.py": TESTS_CARRIAGE,
            "testsuite/W60.txt": W60_DATA,
            "testsuite/E90.py": b"#: E901 (data the tests may read, not a module pytest may import)\ndef broken(:\n",
        },
        "Report lone carriage returns\n\nA carriage return that does not end a CRLF line hides text in some\n"
        "editors and terminals: report it as W605, and give each code a message.\n",
        2,
    )
    _commit(
        repo,
        {
            "checker.py": CHECKER_LENGTH,
            "testsuite/test_checker.py": TESTS_LENGTH,
            "testsuite/E50.txt": b"short\nthis line is far too long\n",
        },
        "Report long lines\n\nLines longer than 20 characters are reported as E501.\n",
        3,
    )
    notes = b"".join(b"- change %d of the release\n" % i for i in range(60))
    files = {"RELEASE.md": notes, "testsuite/test_notes.py": b"def test_notes():\n    pass\n"}
    sha = _commit(repo, files, "Add the release notes", 4)
    blob = _git(repo, "rev-parse", f"{sha}:RELEASE.md").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # as a partial clone lacks it
    return repo
