"""The test command and runner of a SWE-bench task, from SWE-bench's own spec for its (repository,
version): `tox --current-env -epy39 -v --` (sphinx) runs under the tox runner, `./tests/runtests.py
--verbosity 2 ...` (django) under the django runner, `pytest -rA ...` under pytest as written (its
report options only change what pytest prints; evalkit reads JUnit). Other commands (sympy's
`bin/test`) have no runner yet: those tasks keep evalkit's default, `python -m pytest`.
"""

from __future__ import annotations

import shlex

from evalkit.envs import spec_for


def framework_of(test_cmd: str) -> str | None:
    """The runner for a SWE-bench `test_cmd`, or None when evalkit has none for it."""
    try:
        words = shlex.split(test_cmd)
    except ValueError:
        return None
    program = words[0] if words else ""
    if program == "tox":
        return "tox"
    if program.endswith("runtests.py"):
        return "django"
    if program == "pytest" or words[:3] == ["python", "-m", "pytest"]:
        return "pytest"
    return None


def spec_tests(repo: str, version: str) -> dict[str, str] | None:
    """`{"command", "framework"}` from SWE-bench's spec for `repo` at `version`, or None (no spec,
    or a command no runner of evalkit's understands)."""
    spec = spec_for(repo, version) if repo and version else None
    if spec is None or not spec.test_cmd:
        return None
    framework = framework_of(spec.test_cmd)
    return {"command": spec.test_cmd, "framework": framework} if framework else None
