"""The command line starts light: help, `-h` and `--version` load none of the heavy libraries (the
time is measured in benchmarks/cli_startup.py), and the help shows every command and every word
of its text."""

import re
import subprocess
import sys
from importlib.metadata import version

import pytest
import typer
from conftest import EVALKIT
from rich.text import Text

HEAVY = ("scipy", "pandas", "numpy", "docker", "openai", "datasets", "httpx", "jinja2")  # pydantic: typer uses it
COMMANDS = [
    "evaluate",
    "run",
    "score",
    "serve",
    "integrity",
    "gather",
    "stats",
    "compare",
    "report",
    "tasks",
    "sandbox",
]


def loaded_after(code: str) -> list[str]:
    """The heavy libraries in sys.modules after running `code` in a fresh interpreter."""
    probe = f"import sys\n{code}\nprint('LOADED', *(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stderr.splitlines()[-1].split()[1:]


def test_importing_the_command_line_loads_no_heavy_library():
    assert loaded_after("import evalkit.cli") == []


@pytest.mark.parametrize("args", [["--help"], ["-h"], ["run", "-h"], ["tasks", "list", "--help"], ["--version"]])
def test_help_and_version_load_no_heavy_library(args):
    run_main = f"from evalkit.cli import main\nsys.argv = ['evalkit', *{args!r}]\n"
    run_main += "try:\n    main()\nexcept SystemExit:\n    pass"
    assert loaded_after(run_main) == []


def evalkit(*args: str) -> subprocess.CompletedProcess:
    env = {"COLUMNS": "200", "PATH": "/usr/bin:/bin", "TERM": "dumb"}
    return subprocess.run([EVALKIT, *args], capture_output=True, text=True, timeout=60, env=env)


def test_dash_h_is_help_everywhere_and_every_command_is_listed():
    top = evalkit("--help")
    assert top.returncode == 0 and evalkit("-h").stdout == top.stdout
    listed = re.findall(r"^│ (\w[\w-]*) ", top.stdout, re.M)
    assert [c for c in listed if c in COMMANDS] == COMMANDS
    for command in (["run"], ["tasks"], ["tasks", "validate"], ["sandbox", "prune"], ["report"]):
        long, short = evalkit(*command, "--help"), evalkit(*command, "-h")
        assert long.returncode == short.returncode == 0 and long.stdout == short.stdout and "Usage:" in long.stdout


def test_version_prints_the_installed_version():
    result = evalkit("--version")
    assert result.returncode == 0 and result.stdout == f"evalkit {version('evalkit')}\n"


def test_help_texts_lose_no_bracketed_words():
    """Typer renders help as rich markup, where `[published."MODEL"]` is a tag and vanishes."""
    from evalkit.cli import app

    def commands(group):
        for command in group.commands.values():
            yield command
            if hasattr(command, "commands"):
                yield from commands(command)

    texts = [p.help for c in commands(typer.main.get_command(app)) for p in c.params if getattr(p, "help", None)]
    assert any("\\[" in text for text in texts)
    for text in texts:
        assert Text.from_markup(text).plain == text.replace("\\[", "["), text
    assert '[published."MODEL"] tables' in evalkit("report", "--help").stdout
    assert "[models.NAME] entry" in evalkit("run", "--help").stdout
