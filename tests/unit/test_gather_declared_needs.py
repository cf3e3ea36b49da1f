"""Test dependencies read from wherever a project declares them, and the pytest options that need
plugins (declared_needs.py, project_metadata.py, pytest_options.py through detect_environment)."""

from __future__ import annotations

import shlex

from evalkit.gather.declared_needs import declared_needs, pip_requirement, requirement_files
from evalkit.gather.environment import detect_environment
from evalkit.gather.project_metadata import poetry_requirement, poetry_specifier
from evalkit.gather.pytest_options import kept_addopts, needed_plugins, plugin_of_option, pytest_config


def env_of(files: dict[str, str], folders: dict[str, list[str]] | None = None):
    listing = (folders or {}).get
    return detect_environment(files.get, lambda path: False, lambda folder: listing(folder) or [])


def requirements_of(files: dict[str, str], folders: dict[str, list[str]] | None = None) -> list[str]:
    """The requirements besides the build's (setuptools and wheel for a setup.py / setup.cfg)."""
    env = env_of(files, folders)
    return [r for r in env.requirements if r not in env.build_requires]


LIBRARY_SETUP_CFG = """\
[metadata]
name = pkg
[options]
install_requires =
    attrs>=20
[options.extras_require]
tests =
    freezegun
docs =
    sphinx
[tool:pytest]
addopts = --cov=pkg --no-cov-on-fail
"""
TOX_INI = """\
[tox]
envlist = py{38,39}, lint

[testenv]
deps =
    pytest-cov
    -rrequirements-test.txt
    py38: importlib-metadata<5
    lowest: six==1.0
    {[base]deps}
    -e .
extras = tests
commands = pytest {posargs}

[testenv:lint]
deps = flake8
commands = flake8
"""


def test_tox_deps_includes_extras_and_factors_are_read_and_coverage_leaves_addopts():
    files = {"setup.cfg": LIBRARY_SETUP_CFG, "tox.ini": TOX_INI, "requirements-test.txt": "pytest>=6\nmock==4.0\n"}
    env = env_of(files)
    assert requirements_of(files) == ["attrs>=20", "freezegun", "importlib-metadata<5", "mock==4.0", "pytest-cov"]
    assert env.runner_pin == "pytest>=6"
    assert env.sources == ["setup.cfg", "tox.ini", "requirements-test.txt"]
    # the pytest UsageError case: coverage options are dropped, with a note, and addopts overridden
    assert env.dropped_options == ("--cov=pkg", "--no-cov-on-fail") and env.pytest_addopts == ()
    assert env.test_command.endswith("python -m pytest -o addopts=")
    assert "--cov=pkg --no-cov-on-fail" in env.notes[-1]


def test_tox_in_setup_cfg_and_pyproject_and_a_default_env_when_testenv_has_no_deps():
    cfg = "[tox:tox]\nenvlist = py3\n[testenv]\ncommands = pytest\n[testenv:py]\ndeps =\n    responses\n"
    assert requirements_of({"setup.cfg": cfg}) == ["responses"]
    legacy = '[tool.tox]\nlegacy_tox_ini = """\n[testenv]\ndeps = pytest-mock\n    tox\n"""\n'
    assert requirements_of({"pyproject.toml": legacy}) == ["pytest-mock"]
    old_tox = "[testenv]\ndeps=nose mock\ncommands=nosetests\n"  # tox 1's one-line deps
    assert requirements_of({"tox.ini": old_tox}) == ["mock", "nose"]


def test_poetry_dev_dependencies_groups_and_constraints_become_pep_508():
    poetry1 = """\
[tool.poetry]
name = "tomlkit"
[tool.poetry.dependencies]
python = "~2.7 || ^3.5"
enum34 = { version = "^1.1", python = "~2.7" }
typing = { version = "^3.6", python = "<3.5" }
docopt = { version = "*", optional = true }
[tool.poetry.dev-dependencies]
pytest = "^6.2"
pytest-cov = "~2.5"
PyYAML = "5.4.1"
mylib = { git = "https://github.com/x/mylib.git" }
tomlkit = { path = "." }
"""
    env = env_of({"pyproject.toml": poetry1})
    assert env.requirements == [
        "PyYAML==5.4.1",
        'enum34>=1.1,<2.0; python_version >= "2.7" and python_version < "2.8"',
        "pytest-cov>=2.5,<2.6",
        'typing>=3.6,<4.0; python_version < "3.5"',
    ]
    assert env.runner_pin == "pytest>=6.2,<7.0"
    groups = '[tool.poetry]\nname = "x"\n[tool.poetry.group.test.dependencies]\nhypothesis = "^0.2.3"\n'
    groups += '[tool.poetry.group.docs.dependencies]\nfuro = "*"\n[tool.poetry.group.dev.dependencies]\nsix = ">=1"\n'
    assert requirements_of({"pyproject.toml": groups}) == ["hypothesis>=0.2.3,<0.3.0", "six>=1"]
    assert poetry_specifier("^0.0.3") == ">=0.0.3,<0.0.4" and poetry_specifier("1.2.*") == "==1.2.*"
    assert poetry_requirement("requests", {"version": "^2", "extras": ["socks"]}) == "requests[socks]>=2,<3"


def test_pep_735_groups_hatch_envs_and_pdm_dev_dependencies():
    pep735 = """\
[project]
name = "pkg"
dependencies = ["click>=8"]
[project.optional-dependencies]
docs = ["sphinx"]
ci = ["pytest-github-actions-annotate-failures"]
[dependency-groups]
test = ["pytest>=8", {include-group = "coverage"}]
coverage = ["coverage[toml]"]
typing = ["mypy"]
"""
    assert requirements_of({"pyproject.toml": pep735}) == [
        "click>=8", "coverage[toml]", "pytest-github-actions-annotate-failures",
    ]  # fmt: skip
    hatch = """\
[project]
name = "pkg"
[project.optional-dependencies]
cli = ["rich"]
[tool.hatch.envs.default]
dependencies = ["pytest", "pytest-mock", "{root:uri}/vendored"]
[tool.hatch.envs.test]
extra-dependencies = ["respx"]
features = ["cli"]
[tool.hatch.envs.docs]
dependencies = ["mkdocs-material"]
[tool.pdm.dev-dependencies]
test = ["trustme>=0.9"]
lint = ["ruff"]
"""
    assert requirements_of({"pyproject.toml": hatch}) == ["pytest-mock", "respx", "rich", "trustme>=0.9"]


def test_noxfile_test_sessions_install_literals_requirement_files_and_extras():
    noxfile = """\
import nox

DEPS = ["pytest-asyncio", "trio"]

@nox.session(python=["3.8", "3.9"])
def tests(session):
    session.install("-r", "requirements/test.txt")
    session.install("-e", ".[testing]")
    session.install("pytest-xdist", *DEPS)
    session.run("pytest")

@nox.session
def lint(session):
    session.install("flake8", "black")

@nox.session(name="docs")
def build_docs(session):
    session.install("sphinx")
"""
    pyproject = '[project]\nname = "pkg"\n[project.optional-dependencies]\ntesting = ["pkg[extra]", "anyio"]\n'
    pyproject += 'extra = ["idna"]\n'
    files = {"noxfile.py": noxfile, "pyproject.toml": pyproject, "requirements/test.txt": "hypothesis\n"}
    assert requirements_of(files) == ["anyio", "hypothesis", "idna", "pytest-asyncio", "pytest-xdist", "trio"]


def test_pipfile_packages_and_dev_packages():
    pipfile = """\
[[source]]
url = "https://pypi.org/simple"
[packages]
requests = "*"
pkg = {editable = true, path = "."}
[dev-packages]
pytest = ">=6.0"
responses = {version = "==0.10.6", extras = ["x"]}
vcrpy = {git = "https://github.com/kevin1024/vcrpy.git"}
"""
    env = env_of({"Pipfile": pipfile})
    assert env.requirements == ["requests", "responses[x]==0.10.6"] and env.runner_pin == "pytest>=6.0"
    assert env.sources == ["Pipfile"]


def test_requirements_files_anywhere_usual_with_includes_hashes_and_what_pypi_cannot_give():
    folders = {
        "": ["README.md", "requirements.txt", "test-requirements.txt", "requirements-docs.txt"],
        "requirements": ["requirements/base.in", "requirements/base.txt", "requirements/ci.txt",
                         "requirements/docs.txt", "requirements/lint.in"],
        "reqs": ["reqs/testing.in"],
    }  # fmt: skip
    # docs and lint files are not read; a pip-tools .in is read instead of its compiled .txt
    assert requirement_files(folders.get)[-3:] == ["requirements/base.in", "requirements/ci.txt", "reqs/testing.in"]
    compiled = {"requirements": ["requirements/dev.in", "requirements/dev.txt", "requirements/docs.in"]}
    read_first = requirement_files(lambda folder: compiled.get(folder, []))
    assert "requirements/dev.in" in read_first and "requirements/dev.txt" not in read_first
    dev_in = {"requirements/dev.in": "-r docs.in\n-r tests.in\npip-tools\n", "requirements/docs.in": "sphinx\nbabel\n",
              "requirements/tests.in": "pytest-timeout\n"}  # fmt: skip
    assert requirements_of(dev_in, compiled) == ["pytest-timeout"]  # docs.in is not followed, pip-tools is a tool
    files = {
        "test-requirements.txt": "-r requirements/base.txt\n--index-url https://x\nsix==1.16 \\\n"
        "    --hash=sha256:abc --hash=sha256:def\n-e git+https://github.com/x/y.git#egg=y\n./local-wheel\n"
        "z @ https://example.com/z.zip\nbar>=1 ; python_version < '3.8'  # backport\n",
        "requirements/base.txt": "-r common.txt\n",
        "requirements/common.txt": "idna\n",
        "requirements/ci.txt": "-c constraints.txt\npytest-randomly\n",
        "requirements/docs.txt": "sphinx\n",
        "requirements-docs.txt": "furo\n",
        "reqs/testing.in": "freezegun\n",
    }
    env = env_of(files, folders)
    assert env.requirements == ["bar>=1 ; python_version < '3.8'", "freezegun", "idna", "pytest-randomly", "six==1.16"]
    assert env.sources == [
        "requirements/common.txt", "test-requirements.txt", "requirements/ci.txt", "reqs/testing.in",
    ]  # fmt: skip
    assert pip_requirement("pkg[a,b]~=2.0") == "pkg[a,b]~=2.0" and pip_requirement("https://x/y.tar.gz") is None


def test_the_projects_own_name_and_tools_that_never_run_tests_are_not_installed():
    setup = 'setup(name="My_Lib", install_requires=["sphinx>=4"], tests_require=["my-lib[test]", "pytest-mock"])'
    tox = "[testenv]\ndeps =\n    My.Lib\n    tox\n    pre-commit\n    twine\n    black\n    sphinx-rtd-theme\n"
    tox += "    flake8-bugbear\n    mypy\n"
    # sphinx stays: it is what the project itself installs with (a Sphinx extension is tested with it)
    assert requirements_of({"setup.py": setup, "tox.ini": tox}) == ["pytest-mock", "sphinx>=4"]
    assert declared_needs({"setup.py": setup}.get).project == "my-lib"
    # a linter run by a pytest plugin the configuration loads stays, with its plugin
    linted = {"tox.ini": tox + "[pytest]\naddopts = --mypy --flake8\n", "setup.py": setup}
    assert requirements_of(linted) == [
        "flake8-bugbear", "mypy", "pytest-flake8", "pytest-mock", "pytest-mypy", "sphinx>=4",
    ]  # fmt: skip


def test_pytest_configuration_is_the_first_pytest_would_read_and_its_plugins_are_installed():
    pytest_ini = "[pytest]\naddopts = -ra -n auto --timeout 30 -p xdist\nasyncio_mode = auto\n"
    pytest_ini += "required_plugins = pytest-httpserver>=1.0\nDJANGO_SETTINGS_MODULE = site.settings\n"
    files = {"pytest.ini": pytest_ini, "setup.cfg": "[tool:pytest]\naddopts = --benchmark-skip\n"}
    config = pytest_config(files.get)
    assert config.source == "pytest.ini" and config.addopts == ("-ra", "-n", "auto", "--timeout", "30", "-p", "xdist")
    assert [r for r, _ in needed_plugins(config)] == [
        "pytest-httpserver>=1.0", "pytest-asyncio", "pytest-django", "pytest-xdist", "pytest-timeout",
    ]  # fmt: skip
    env = env_of(files)
    assert requirements_of(files) == ["pytest-asyncio", "pytest-django", "pytest-httpserver>=1.0", "pytest-timeout",
                                "pytest-xdist"]  # fmt: skip
    assert env.sources == [
        "pytest.ini required_plugins", "pytest.ini asyncio_mode", "pytest.ini django_settings_module",
        "pytest.ini addopts",
    ]  # fmt: skip
    assert env.dropped_options == () and "addopts" not in env.test_command  # nothing dropped: no override
    toml = '[tool.pytest.ini_options]\naddopts = ["--doctest-plus", "--snapshot-update"]\n'
    assert requirements_of({"pyproject.toml": toml, "tox.ini": "[pytest]\naddopts = --reruns 2\n"}) == [
        "pytest-doctestplus", "syrupy",
    ]  # fmt: skip


def test_kept_addopts_drops_coverage_and_unknown_plugins_options_with_their_values():
    tokens = shlex.split("-v --cov=pkg --cov-report term -n=4 --timeout 30 -m 'not slow' --slow --dist loadfile "
                         "-p pytest_cov -p no:cacheprovider --weird tests -rxs --cov")  # fmt: skip
    kept, dropped = kept_addopts(tokens, ["pytest-timeout"], local_options=["--slow"])
    assert kept == ["-v", "--timeout", "30", "-m", "not slow", "--slow", "-p", "no:cacheprovider", "tests", "-rxs"]
    assert dropped == ["--cov=pkg", "--cov-report", "term", "-n=4", "--dist", "loadfile", "-p", "pytest_cov",
                       "--weird", "--cov"]  # fmt: skip
    assert [plugin_of_option(o) for o in ("--timeout", "--cov=pkg", "-n4", "-v", "--benchmark-skip", "--what")] == [
        "pytest-timeout", "pytest-cov", "pytest-xdist", None, "pytest-benchmark", None,
    ]  # fmt: skip
    assert kept_addopts(["-nauto", "--reruns", "3"], ["pytest-xdist", "pytest-rerunfailures"]) == (
        ["-nauto", "--reruns", "3"], [],
    )  # fmt: skip


def test_the_test_command_overrides_addopts_only_with_what_was_kept_quoted():
    files = {
        "tox.ini": "[pytest]\naddopts = -m 'not network' --cov-fail-under=95 --weird-option\n",
        "setup.py": "setup()",
        "conftest.py": "def pytest_addoption(parser):\n    parser.addoption('--net')\n",
    }
    env = env_of(files)
    assert env.pytest_addopts == ("-m", "not network")
    assert env.dropped_options == ("--cov-fail-under=95", "--weird-option")
    assert env.test_command.endswith("; python -m pytest -o 'addopts=-m '\"'\"'not network'\"'\"''")
    assert shlex.split(env.test_command.split("; ")[1])[4] == "addopts=-m 'not network'"
    local = {"pytest.ini": "[pytest]\naddopts = --net -p tests.plugin\n", "tests/plugin.py": ""}
    assert env_of({**local, "conftest.py": files["conftest.py"]}).dropped_options == ()
    assert env_of(local).dropped_options == ("--net",)
