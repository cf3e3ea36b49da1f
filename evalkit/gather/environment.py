"""How to install and test a gathered repository, and the image recipe that does it.

Dependencies are read, never executed (declared_needs.py: the project's metadata, tox, nox,
Pipfile and requirements files; pytest_options.py: the plugins its pytest configuration needs).
The recipe follows the
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

import configparser
import hashlib
import json
import posixpath
import re
import shutil
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from evalkit.errors import SetupError
from evalkit.gather.declared_needs import declared_needs, runs_no_tests
from evalkit.gather.era import CURRENT, Era, python_base_for, runner_requirement
from evalkit.gather.project_metadata import lines_of, normalised
from evalkit.gather.pytest_options import (
    PLUGIN_TOOLS,
    conftest_options,
    kept_addopts,
    needed_plugins,
    override_addopts,
    parse_addopts,
    pytest_config,
)
from evalkit.pyparse import parse_python
from evalkit.sandbox.env_recipe import CA_FILE, HOST_CA_BUNDLE, PIP_VERSION
from evalkit.sandbox.python_bases import DEFAULT_BASE_IMAGE, PYTHON_BASES, PythonBase

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
    # the pytest configuration's addopts without `dropped_options` (None when it has none)
    pytest_addopts: tuple[str, ...] | None = None
    dropped_options: tuple[str, ...] = ()
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
        imported from /workspace. `addopts` is overridden only when options had to be dropped."""
        pytest = "python -m pytest"
        if self.dropped_options:
            pytest += " " + override_addopts(self.pytest_addopts or ())
        if not self.installable:
            return pytest
        return f"{INSTALL_PROJECT} >/dev/null 2>&1; {pytest}"

    def without_options(self, names: tuple[str, ...]) -> Environment:
        """This environment with the addopts options `names` (and their values) dropped too."""
        kept: list[str] = []
        dropped = list(self.dropped_options)
        for option in parse_addopts(self.pytest_addopts or ()):
            gone = option.tokens[0].split("=", 1)[0] in names
            (dropped if gone else kept).extend(option.tokens)
        dropped += [n for n in names if n not in dropped]  # named even when no addopts held it
        return replace(self, pytest_addopts=tuple(kept), dropped_options=tuple(dropped))

    @staticmethod
    def requirement_name(requirement: str) -> str:
        """The distribution a requirement line names ('' for none)."""
        match = _NAME.match(requirement)
        return match.group(1) if match else ""


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
        classifiers = classifiers or lines_of(parser.get("metadata", "classifiers", fallback=""))
    setup_py = read("setup.py")
    if setup_py and not requires and (found := _PYTHON_REQUIRES.search(setup_py)):
        requires = found.group(1)
    return (requires.strip() if isinstance(requires, str) and requires.strip() else None), classifiers


def detect_environment(
    read: Callable[[str], str | None],
    has_folder: Callable[[str], bool],
    listing: Callable[[str], list[str]] = lambda folder: [],
) -> Environment:
    """What the repository at its base commit needs to run its tests (pure given `read` and
    `listing`, a folder's file paths)."""
    declared = declared_needs(read, listing)
    config = pytest_config(read)
    plugins = needed_plugins(config) if config else []
    tools = [PLUGIN_TOOLS[normalised(r)] for r, _ in plugins if normalised(r) in PLUGIN_TOOLS]
    found = [(n.requirement, n.source) for n in declared.needs if n.runtime or not runs_no_tests(n.requirement, tools)]
    found += plugins
    unique: dict[str, str] = {}
    sources: list[str] = []
    for requirement, source in found:
        match = _NAME.match(requirement)
        name = normalised(match.group(1)) if match else ""
        if name and name != declared.project and name not in unique:
            unique[name] = requirement
            sources += [] if source in sources else [source]
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
    for requirement in build:
        if match := _NAME.match(requirement):
            unique.setdefault(normalised(match.group(1)), requirement)
    runner_pin = unique.pop(RUNNER, None)
    notes = list(declared.notes)
    kept, dropped = [], []
    if config:
        local = [*conftest_options(read), *_local_modules(read, config.addopts)]
        kept, dropped = kept_addopts(config.addopts, unique, local)
    if dropped:
        notes.append(f"dropped from {config.source} addopts (coverage, or no plugin here defines them): "
                     + " ".join(dropped))  # fmt: skip
    requires_python, classifiers = _python_facts(read)
    return Environment(
        sorted(unique.values()), sources, has_folder("src"), notes, installable, build,
        runner_pin, requires_python, classifiers, tuple(kept) if config else None, tuple(dropped),
    )  # fmt: skip


def _local_modules(read: Callable[[str], str | None], addopts: tuple[str, ...]) -> list[str]:
    """The `-p` plugin modules of `addopts` the repository itself has (`-p tests.plugin`)."""
    names = [addopts[i + 1] for i, t in enumerate(addopts[:-1]) if t == "-p"]
    names += [t[2:] for t in addopts if t.startswith("-p") and len(t) > 2 and not t.startswith("--")]
    found = []
    for name in names:
        path = name.replace(".", "/")
        if any(read(f"{top}{path}{end}") is not None for top in ("", "src/") for end in (".py", "/__init__.py")):
            found.append(name)
    return found


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
# then the repository's test dependencies, PyPI held to {hold}. When the set does not install as a
# whole, one requirement at a time: each held to the date when it installs so, else from today's
# PyPI, else left out (a Python 2 backport, a release PyPI lost), so that one bad line does not
# bring every other dependency to today's releases.
set -u
pip() {{
  /opt/venv/bin/python -m pip --disable-pip-version-check install --no-cache-dir \
    --cert /opt/evalkit-env/ca-bundle.crt "$@"
}}
hold={hold}
if [ "$hold" != today ]; then
  PIP_UPLOADED_PRIOR_TO=$hold; export PIP_UPLOADED_PRIOR_TO
fi
# no requirement installed later may move pytest off the era's line
printf '%s\\n' {runner} > /opt/evalkit-env/runner-constraint.txt
pip --ignore-installed {runner} || env -u PIP_UPLOADED_PRIOR_TO /opt/venv/bin/python -m pip \
  --disable-pip-version-check install --no-cache-dir --cert /opt/evalkit-env/ca-bundle.crt \
  --ignore-installed {runner} || exit 1
PIP_CONSTRAINT=/opt/evalkit-env/runner-constraint.txt; export PIP_CONSTRAINT
if pip -r /opt/evalkit-env/requirements.txt; then exit 0; fi
echo "the requirements do not install together as of $hold: one at a time" >&2
while IFS= read -r requirement; do
  [ -n "$requirement" ] || continue
  pip "$requirement" && continue
  [ "$hold" != today ] && env -u PIP_UPLOADED_PRIOR_TO /opt/venv/bin/python -m pip --disable-pip-version-check \
    install --no-cache-dir --cert /opt/evalkit-env/ca-bundle.crt "$requirement" \
    && echo "evalkit: $requirement from today's PyPI" >&2 && continue
  echo "evalkit: $requirement left out: not installable" >&2
done < /opt/evalkit-env/requirements.txt
exit 0
"""


# pytest's own dependencies: a repository's pin of one (`py==1.4.12`, 2012) holds pytest to the release
# that wanted it, older than the era's and than any the guard loads in; pytest chooses them instead
RUNNER_DEPENDENCIES = frozenset({"py", "pluggy", "iniconfig", "exceptiongroup", "pytest-runner"})


def unpinned_runner_dependency(requirement: str) -> str:
    """`requirement`, without its version when it names one of pytest's own dependencies."""
    name = Environment.requirement_name(requirement)
    return name if normalised(name) in RUNNER_DEPENDENCIES else requirement


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
        "requirements.txt": "".join(f"{r}\n" for r in [*map(unpinned_runner_dependency, env.requirements), runner]),
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
