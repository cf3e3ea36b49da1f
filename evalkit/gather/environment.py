"""How to install and test a gathered repository, and the image recipe that does it.

Dependencies are read, never executed: `[project]` dependencies and test/dev extras and
dependency groups of pyproject.toml, `install_requires` / test extras of setup.cfg and (literal
lists only) of setup.py's `setup(...)`, and the usual requirements files. The recipe follows the
commit's era (era.py): the venv gets the era's pytest (installed in it, whatever pytest the base
has), PyPI is held to the era's end when that installs, and the base is the Python base
`requires-python` / classifiers choose. A commit of today's era
with no dependency, no pytest pin and no declared Python keeps the stock `python` recipe. Otherwise
a recipe folder is written beside the suite: the chosen base plus a venv (with the system site
packages) into which pip installs the runner and the requirements at build time.
Builds reach PyPI only through the CA bundle copied into the recipe (`--ca-bundle`, default the
host's); the agent phase still runs without network.
"""

from __future__ import annotations

import ast
import configparser
import contextlib
import hashlib
import json
import posixpath
import re
import shutil
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.errors import SetupError
from evalkit.gather.era import CURRENT, Era, python_base_for, runner_requirement
from evalkit.pyparse import parse_python
from evalkit.sandbox.env_recipe import CA_FILE, HOST_CA_BUNDLE, PIP_VERSION
from evalkit.sandbox.python_bases import DEFAULT_BASE_IMAGE, PYTHON_BASES, PythonBase

REQUIREMENT_FILES = (
    "requirements.txt",
    "requirements-dev.txt",
    "requirements-test.txt",
    "requirements_dev.txt",
    "requirements_test.txt",
    "test-requirements.txt",
    "dev-requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/dev.txt",
)
TEST_EXTRAS = ("test", "tests", "testing", "dev")
RUNNER = "pytest"  # installed by the era's line (era.runner_requirement), the repository's pin kept
_PYTHON_REQUIRES = re.compile(r"python_requires\s*=\s*[\"']([^\"']+)[\"']")
INSTALL_PROJECT = "python -m pip install --quiet --no-deps --no-build-isolation --no-index -e ."
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")

DOCKERFILE = """\
# Written by `evalkit gather`: {repo}'s test dependencies and its era's pytest ({era}) over a base.
ARG BASE_IMAGE={base_image}
FROM ${{BASE_IMAGE}}
USER root
COPY . /opt/evalkit-env/
{apt}RUN python3 -m venv --system-site-packages --without-pip /opt/venv \\
 && /opt/venv/bin/python /opt/evalkit-env/{pip_wheel}/pip install --no-cache-dir --disable-pip-version-check \\
      --cert /opt/evalkit-env/ca-bundle.crt /opt/evalkit-env/{pip_wheel} \\
 && sh /opt/evalkit-env/install.sh \\
 && rm -rf /opt/evalkit-env && chown -R 1000:1000 /opt/venv
# The test command installs the project itself (editable, offline, as the sandbox user): metadata
# only, the code stays in /workspace. setuptools-scm has no git history there, hence a version.
ENV PATH=/opt/venv/bin:$PATH PYTHONPATH={pythonpath} PYTHONDONTWRITEBYTECODE=1 \\
    SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /workspace
"""


@dataclass(frozen=True)
class Environment:
    requirements: list[str] = field(default_factory=list)  # pip requirement lines
    sources: list[str] = field(default_factory=list)  # files they came from
    src_layout: bool = False
    notes: list[str] = field(default_factory=list)
    installable: bool = False  # a pyproject with a build system, or setup.py / setup.cfg
    build_requires: list[str] = field(default_factory=list)
    runner_pin: str | None = None  # the repository's own pytest requirement, if any
    requires_python: str | None = None
    classifiers: list[str] = field(default_factory=list)
    apt_packages: tuple[str, ...] = ()  # Debian packages a repair found the build needs (repair.py)
    python_suite: str | None = None  # a repair's older Python base (its Debian suite), over the declared one

    @property
    def python_base(self) -> PythonBase | None:
        """The base a repair chose, else the one `requires-python` and the classifiers choose."""
        chosen = next((b for b in PYTHON_BASES if b.suite == self.python_suite), None)
        return chosen or python_base_for(self.requires_python, self.classifiers)

    @property
    def pythonpath(self) -> str:
        return "/workspace/src:/workspace" if self.src_layout else "/workspace"

    @property
    def test_command(self) -> str:
        """pytest, after an offline editable install of the project when it is installable: its
        metadata (importlib.metadata.version, entry points) then exists, and the code is still
        imported from /workspace."""
        if not self.installable:
            return "python -m pytest"
        return f"{INSTALL_PROJECT} >/dev/null 2>&1; python -m pytest"


def _requirement_lines(text: str) -> list[str]:
    lines = []
    for raw in text.splitlines():
        line = raw.split(" #")[0].strip()
        if not line or line.startswith(("#", "-e", "--", ".")) or line.startswith("-r"):
            continue
        lines.append(line)
    return lines


def _from_pyproject(text: str) -> list[str]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    project = data.get("project", {})
    found = list(project.get("dependencies", []))
    for extra in TEST_EXTRAS:
        found += project.get("optional-dependencies", {}).get(extra, [])
        found += [g for g in data.get("dependency-groups", {}).get(extra, []) if isinstance(g, str)]
    return found


def _from_setup_cfg(text: str) -> list[str]:
    parser = configparser.ConfigParser()
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    found = _requirement_lines(parser.get("options", "install_requires", fallback=""))
    for extra in TEST_EXTRAS:
        found += _requirement_lines(parser.get("options.extras_require", extra, fallback=""))
    return found


def _from_setup_py(text: str) -> list[str]:
    """`install_requires` and the test extras of a `setup(...)` call, when they are literal lists:
    parsed, never run (Jinja 3.0 keeps its one dependency, MarkupSafe, only there)."""
    try:
        tree = parse_python(text)
    except SyntaxError:
        return []
    found: list[str] = []
    named = {}  # module-level NAME = literal (marshmallow: extras_require=EXTRAS_REQUIRE)
    for statement in tree.body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            with contextlib.suppress(ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                named[statement.targets[0].id] = ast.literal_eval(statement.value)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "setup"):
            continue
        for keyword in node.keywords:
            try:
                value = (
                    named.get(keyword.value.id)
                    if isinstance(keyword.value, ast.Name)
                    else ast.literal_eval(keyword.value)
                )
            except ValueError:
                continue
            if keyword.arg == "install_requires" and isinstance(value, list | tuple):
                found += [r for r in value if isinstance(r, str)]
            elif keyword.arg == "extras_require" and isinstance(value, dict):
                found += [r for extra in TEST_EXTRAS for r in value.get(extra, []) if isinstance(r, str)]
    return found


def _python_facts(read: Callable[[str], str | None]) -> tuple[str | None, list[str]]:
    """`requires-python` (pyproject, setup.cfg, or a literal `python_requires=` in setup.py, read
    not run) and the version classifiers."""
    requires: str | None = None
    classifiers: list[str] = []
    pyproject = read("pyproject.toml")
    if pyproject:
        try:
            project = tomllib.loads(pyproject).get("project", {})
        except tomllib.TOMLDecodeError:
            project = {}
        requires = project.get("requires-python")
        classifiers = [c for c in project.get("classifiers", []) if isinstance(c, str)]
    setup_cfg = read("setup.cfg")
    if setup_cfg and (not requires or not classifiers):
        parser = configparser.ConfigParser()
        try:
            parser.read_string(setup_cfg)
        except configparser.Error:
            parser = configparser.ConfigParser()
        requires = requires or parser.get("options", "python_requires", fallback=None)
        classifiers = classifiers or _requirement_lines(parser.get("metadata", "classifiers", fallback=""))
    setup_py = read("setup.py")
    if setup_py and not requires and (found := _PYTHON_REQUIRES.search(setup_py)):
        requires = found.group(1)
    return (requires.strip() if isinstance(requires, str) and requires.strip() else None), classifiers


def detect_environment(read: Callable[[str], str | None], has_folder: Callable[[str], bool]) -> Environment:
    """What the repository at its base commit needs to run its tests (pure given `read`)."""
    requirements: list[str] = []
    sources: list[str] = []
    for name, parse in (
        ("pyproject.toml", _from_pyproject),
        ("setup.cfg", _from_setup_cfg),
        ("setup.py", _from_setup_py),
    ):
        text = read(name)
        if text:
            found = parse(text)
            if found:
                requirements += found
                sources.append(name)
    for name in REQUIREMENT_FILES:
        text = read(name)
        if text:
            requirements += _requirement_lines(text)
            sources.append(name)
    notes = []
    if read("setup.py") and not sources:
        notes.append("setup.py is not executed: install_requires not given as a literal list are not read")
    pyproject = read("pyproject.toml")
    build: list[str] = []
    if pyproject:
        try:
            build = list(tomllib.loads(pyproject).get("build-system", {}).get("requires", []))
        except tomllib.TOMLDecodeError:
            build = []
    installable = bool(build) or bool(read("setup.py")) or bool(read("setup.cfg"))
    if installable and not build:
        build = ["setuptools>=61", "wheel"]
    requirements += build
    unique: dict[str, str] = {}
    for requirement in requirements:
        match = _NAME.match(requirement)
        if match:
            unique.setdefault(match.group(1).lower().replace("_", "-"), requirement)
    runner_pin = unique.pop(RUNNER, None)
    requires_python, classifiers = _python_facts(read)
    return Environment(
        sorted(unique.values()), sources, has_folder("src"), notes, installable, build,
        runner_pin, requires_python, classifiers,
    )  # fmt: skip


# What today's Python says of code only an older one reads: Python 2, and `f(x for x in y, )`,
# which 3.7 refused (a newer Python's syntax on the host's older one says something else)
_OLDER_PYTHON = re.compile(
    r"Missing parentheses in call to '(print|exec)'|leading zeros in decimal integer literals"
    r"|multiple exception types must be parenthesized|Generator expression must be parenthesized"
)


def package_modules(paths: list[str], listing: Callable[[str], list[str]]) -> list[str]:
    """`paths`, then the other modules of the folders their Python files are in and of the
    repository's top-level packages (`listing` gives a folder's entries at the base): the tests
    import those, so a module the change never edits can still need an older Python (toolz 2016:
    a change to dicttoolz.py, or a new `tlz` package, and a Python 3.6 generator argument in
    toolz/functoolz.py)."""
    folders = dict.fromkeys(posixpath.dirname(p) for p in paths if p.endswith(".py"))
    for top in ("", "src"):
        for entry in listing(top):
            if not posixpath.basename(entry).startswith("test") and f"{entry}/__init__.py" in listing(entry):
                folders[entry] = None
    beside: list[str] = []
    for folder in folders:
        beside += [p for p in listing(folder) if p.endswith(".py") and p not in paths and p not in beside]
    return [*paths, *beside]


def older_python_only(read: Callable[[str], str | None], paths: list[str]) -> str | None:
    """Why no offered base can run the change's code: the first of `paths` (the files the change
    edits, read at the base) inside a package (its folder has an `__init__.py`: not a script or an
    example, such as Jinja's Python 2 `ext/django2jinja`) that only a Python older than any base
    reads (the oldest is 3.9); None when none is."""
    for path in paths:
        packaged = path.endswith(".py") and read(posixpath.join(posixpath.dirname(path), "__init__.py")) is not None
        text = read(path) if packaged else None
        try:
            parse_python(text or "")
        except SyntaxError as exc:
            if _OLDER_PYTHON.search(str(exc.msg)):
                return f"code for an older Python ({path}, line {exc.lineno}: {exc.msg}); the oldest base is 3.9"
    return None


INSTALL_SCRIPT = """\
#!/bin/sh
# Written by `evalkit gather`: the era's pytest ({era}) in the venv, whatever pytest the base has,
# then the repository's test dependencies; PyPI held to {hold} when that installs, else today's
# PyPI with the runner's ceiling kept (old releases may have no wheel for the base's Python).
set -u
install() {{
  /opt/venv/bin/python -m pip install --no-cache-dir --disable-pip-version-check \\
    --cert /opt/evalkit-env/ca-bundle.crt --ignore-installed {runner} \\
  && /opt/venv/bin/python -m pip install --no-cache-dir --disable-pip-version-check \\
    --cert /opt/evalkit-env/ca-bundle.crt -r /opt/evalkit-env/requirements.txt
}}
hold={hold}
if [ "$hold" != today ]; then
  PIP_UPLOADED_PRIOR_TO=$hold; export PIP_UPLOADED_PRIOR_TO
  if install; then exit 0; fi
  echo "not installable from PyPI as of $hold: trying today's PyPI" >&2
  unset PIP_UPLOADED_PRIOR_TO
fi
install
"""


def recipe_files(env: Environment, repo_name: str, era: Era, pip_wheel: str) -> dict[str, str]:
    """The recipe's text files (Dockerfile, install.sh, requirements.txt) for `env` in `era` (pure)."""
    runner = runner_requirement(era, env.runner_pin)
    base = env.python_base or era.python_base
    hold = era.pypi_as_of or "today"
    apt = ""
    if env.apt_packages:
        cert = "-o Acquire::https::CAInfo=/opt/evalkit-env/ca-bundle.crt"
        apt = (
            f"RUN apt-get {cert} update && DEBIAN_FRONTEND=noninteractive apt-get {cert} install -y"
            f" --no-install-recommends {' '.join(env.apt_packages)} && rm -rf /var/lib/apt/lists/*\n"
        )
    return {
        "Dockerfile": DOCKERFILE.format(
            repo=repo_name,
            era=era.name,
            base_image=base.image if base else DEFAULT_BASE_IMAGE,
            pip_wheel=pip_wheel,
            pythonpath=env.pythonpath,
            apt=apt,
        ),
        "install.sh": INSTALL_SCRIPT.format(era=era.name, hold=hold, runner=json.dumps(runner)),
        "requirements.txt": "".join(f"{r}\n" for r in [*env.requirements, runner]),
    }


def needs_recipe(env: Environment, era: Era) -> bool:
    """False when the stock `python` recipe is the environment: today's era, nothing to install,
    no pytest pin and no declared Python."""
    declared = env.python_base is not None
    wanted = env.requirements or env.src_layout or env.installable or env.runner_pin or env.apt_packages or declared
    return bool(wanted) or not era.current


def write_recipe(
    env: Environment, repo_name: str, suite_dir: Path, ca_bundle: Path = HOST_CA_BUNDLE, era: Era = CURRENT
) -> str:
    """Write the recipe folder and return the task `image` value (relative to a task folder);
    'python' when the stock recipe is enough."""
    if not needs_recipe(env, era):
        return "python"
    if not ca_bundle.is_file():
        raise SetupError(f"--ca-bundle {ca_bundle}: no such file; image builds need it to reach PyPI")
    slug = re.sub(r"[^a-z0-9]+", "-", repo_name.lower()).strip("-") or "repo"
    files = recipe_files(env, repo_name, era, f"pip-{PIP_VERSION}-py3-none-any.whl")
    digest = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:8]
    recipe = suite_dir / "_env" / f"{slug}-{digest}"
    recipe.mkdir(parents=True, exist_ok=True)
    if ca_bundle.resolve() != HOST_CA_BUNDLE.resolve():  # the host's own is added at build time
        shutil.copyfile(ca_bundle, recipe / CA_FILE)
    for name, text in files.items():
        (recipe / name).write_text(text)
    return f"../_env/{recipe.name}"
