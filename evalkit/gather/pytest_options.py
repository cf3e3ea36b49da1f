"""The pytest plugins a repository's pytest configuration needs, and the `addopts` it can keep.

pytest stops with a UsageError before collecting anything when `addopts` names an option no
installed plugin defines (`--cov=pkg` with pytest-cov declared only in tox.ini). So the
configuration pytest itself would read (the first of pytest.ini, pyproject's
`[tool.pytest.ini_options]`, tox.ini `[pytest]`, setup.cfg `[tool:pytest]`) is read, each option
of `addopts` and each plugin ini key mapped to the well-known distribution that defines it, and
those distributions installed. Options no plugin here defines (and no conftest.py of the
repository adds) are dropped from `addopts`, with their values, and the test command overrides
`addopts` with the rest. Coverage options are always dropped: a coverage threshold fails a
correct change and coverage slows every run, which is also what SWE-bench's harnesses effectively
do (they run the named tests without the project's coverage flags); pytest-cov is then not needed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from evalkit.gather.project_metadata import ini_of, normalised, toml_of

Read = Callable[[str], str | None]
OPTIONAL = "?"  # an option whose value may follow it or not (`--cov`, `--cov=pkg`)

# option → (distribution, how many values follow it); None for pytest's own options
PLUGIN_OPTIONS: dict[str, tuple[str | None, int | str]] = {
    **{o: ("pytest-cov", 1) for o in ("--cov-report", "--cov-config", "--cov-fail-under", "--cov-context")},
    **{o: ("pytest-cov", 0) for o in ("--no-cov", "--no-cov-on-fail", "--cov-append", "--cov-branch")},
    "--cov": ("pytest-cov", OPTIONAL), "--cov-source": ("pytest-cov", 1),
    "--timeout": ("pytest-timeout", 1), "--timeout-method": ("pytest-timeout", 1),
    "--timeout_method": ("pytest-timeout", 1),
    "-n": ("pytest-xdist", 1), "--numprocesses": ("pytest-xdist", 1), "--dist": ("pytest-xdist", 1),
    "--maxprocesses": ("pytest-xdist", 1), "--tx": ("pytest-xdist", 1), "--looponfail": ("pytest-xdist", 0),
    "-f": ("pytest-xdist", 0),
    "--doctest-plus": ("pytest-doctestplus", 0), "--doctest-rst": ("pytest-doctestplus", 0),
    "--doctest-ufunc": ("pytest-doctestplus", 0), "--text-file-format": ("pytest-doctestplus", 1),
    "--flake8": ("pytest-flake8", 0), "--mypy": ("pytest-mypy", 0), "--black": ("pytest-black", 0),
    "--isort": ("pytest-isort", 0), "--pep8": ("pytest-pep8", 0), "--pylint": ("pytest-pylint", 0),
    "--ruff": ("pytest-ruff", 0), "--ruff-format": ("pytest-ruff", 0),
    "--reruns": ("pytest-rerunfailures", 1), "--reruns-delay": ("pytest-rerunfailures", 1),
    "--only-rerun": ("pytest-rerunfailures", 1),
    "--mpl": ("pytest-mpl", 0), "--mpl-baseline-path": ("pytest-mpl", 1), "--mpl-results-path": ("pytest-mpl", 1),
    "--html": ("pytest-html", 1), "--self-contained-html": ("pytest-html", 0),
    "--asyncio-mode": ("pytest-asyncio", 1), "--snapshot-update": ("syrupy", 0),
    "--snapshot-warn-unused": ("syrupy", 0), "--instafail": ("pytest-instafail", 0),
    "--sugar": ("pytest-sugar", 0), "--ds": ("pytest-django", 1), "--reuse-db": ("pytest-django", 0),
    "--nomigrations": ("pytest-django", 0), "--no-migrations": ("pytest-django", 0),
    "--benchmark-min-rounds": ("pytest-benchmark", 1), "--benchmark-max-time": ("pytest-benchmark", 1),
    "--benchmark-columns": ("pytest-benchmark", 1), "--benchmark-sort": ("pytest-benchmark", 1),
    "--randomly-seed": ("pytest-randomly", 1), "--hypothesis-profile": ("hypothesis", 1),
    "--hypothesis-seed": ("hypothesis", 1), "--hypothesis-verbosity": ("hypothesis", 1),
    "--ignore-flaky": ("flaky", 0), "--force-flaky": ("flaky", 0), "--remote-data": ("pytest-remotedata", OPTIONAL),
}  # fmt: skip
# families: any other option starting with the prefix, no value unless given with `=`
PLUGIN_PREFIXES = {
    "--cov": "pytest-cov", "--benchmark-": "pytest-benchmark", "--randomly-": "pytest-randomly",
    "--hypothesis-": "hypothesis", "--doctest-plus": "pytest-doctestplus", "--flake8": "pytest-flake8",
    "--mypy": "pytest-mypy", "--html": "pytest-html", "--asyncio": "pytest-asyncio",
    "--snapshot-": "syrupy", "--mpl": "pytest-mpl",
}  # fmt: skip
BUILTIN_WITH_VALUE = {
    "-k", "-m", "-r", "-c", "-o", "-W", "-p", "--tb", "--capture", "--maxfail", "--durations", "--durations-min",
    "--color", "--code-highlight", "--ignore", "--ignore-glob", "--deselect", "--rootdir", "--confcutdir",
    "--import-mode", "--basetemp", "--pythonwarnings", "--junitxml", "--junit-xml", "--junit-prefix",
    "--result-log", "--override-ini", "--assert", "--log-level", "--log-format", "--log-date-format",
    "--log-cli-level", "--log-cli-format", "--log-cli-date-format", "--log-file", "--log-file-level",
    "--log-file-format", "--log-file-date-format", "--log-auto-indent", "--show-capture", "--doctest-glob",
    "--doctest-report", "--pdbcls", "--config-file", "--inifile", "--report-log",
}  # fmt: skip
BUILTIN_FLAGS = {
    "-v", "-q", "-x", "-l", "-s", "-h", "--verbose", "--quiet", "--exitfirst", "--showlocals", "--strict",
    "--strict-markers", "--strict-config", "--lf", "--last-failed", "--ff", "--failed-first", "--nf",
    "--new-first", "--sw", "--stepwise", "--sw-skip", "--stepwise-skip", "--cache-show", "--cache-clear",
    "--doctest-modules", "--doctest-ignore-import-errors", "--doctest-continue-on-failure", "--pyargs",
    "--continue-on-collection-errors", "--noconftest", "--keep-duplicates", "--collect-only", "--co",
    "--runxfail", "--pdb", "--trace", "--full-trace", "--fulltrace", "--setup-only", "--setup-show",
    "--setup-plan", "--fixtures", "--fixtures-per-test", "--debug", "--trace-config", "--no-header",
    "--no-summary", "--disable-warnings", "--disable-pytest-warnings", "--capture=no", "--lfnf",
    "--last-failed-no-failures", "--verbosity", "-rN", "--nomemoize", "--show-fixtures",
}  # fmt: skip
# `-p name`: a plugin module → the distribution that has it
PLUGIN_MODULES = {
    "xdist": "pytest-xdist", "xdist.plugin": "pytest-xdist", "pytest_cov": "pytest-cov",
    "randomly": "pytest-randomly", "pytest_randomly": "pytest-randomly", "pytest_asyncio": "pytest-asyncio",
    "asyncio": "pytest-asyncio", "pytest_mock": "pytest-mock", "pytest_timeout": "pytest-timeout",
    "anyio": "anyio", "pytest_django": "pytest-django", "hypothesis": "hypothesis", "syrupy": "syrupy",
    "pytest_doctestplus": "pytest-doctestplus", "pytest_benchmark": "pytest-benchmark",
    "pytest_rerunfailures": "pytest-rerunfailures", "pytest_httpserver": "pytest-httpserver",
    "pytest_env": "pytest-env", "pytest_mpl": "pytest-mpl", "flaky": "flaky",
}  # fmt: skip
BUILTIN_MODULES = {"pytester", "doctest", "cacheprovider", "warnings", "logging", "faulthandler", "junitxml"}
# ini keys that only a plugin reads; a key ending in `-` is a prefix
PLUGIN_INI_KEYS = {
    "asyncio_mode": "pytest-asyncio", "asyncio_default_fixture_loop_scope": "pytest-asyncio",
    "timeout": "pytest-timeout", "timeout_method": "pytest-timeout", "DJANGO_SETTINGS_MODULE": "pytest-django",
    "django_find_project": "pytest-django", "mock_use_standalone_module": "pytest-mock", "env": "pytest-env",
    "flake8-": "pytest-flake8", "doctest_plus": "pytest-doctestplus", "doctest_rst": "pytest-doctestplus",
    "mpl-baseline-path": "pytest-mpl", "mypy-": "pytest-mypy",
}  # fmt: skip
COVERAGE = "pytest-cov"


@dataclass(frozen=True)
class PytestConfig:
    source: str  # the file pytest reads its configuration from
    addopts: tuple[str, ...]
    keys: tuple[str, ...]  # the other ini keys set
    required_plugins: tuple[str, ...]


def pytest_config(read: Read) -> PytestConfig | None:
    """The configuration pytest would use at the repository's root, in pytest's own order."""
    for source, section in (("pytest.ini", "pytest"), (".pytest.ini", "pytest"), ("pyproject.toml", None),
                            ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):  # fmt: skip
        text = read(source)
        if text is None:
            continue
        if section is None:
            options = toml_of(text).get("tool", {}).get("pytest", {}).get("ini_options")
            if not isinstance(options, dict):
                continue
            values = {k: v if isinstance(v, str) else " ".join(map(str, v)) if isinstance(v, list) else str(v)
                      for k, v in options.items()}  # fmt: skip
        else:
            parser = ini_of(text)
            if not parser.has_section(section):
                if source.endswith("pytest.ini"):
                    return PytestConfig(source, (), (), ())  # pytest.ini is the config even without [pytest]
                continue
            values = dict(parser.items(section))
        try:
            addopts = tuple(shlex.split(values.get("addopts", ""), comments=True))
        except ValueError:
            addopts = tuple(values.get("addopts", "").split())
        plugins = tuple(re.split(r"\s+", values.get("required_plugins", "").strip()))
        keys = tuple(k for k in values if k not in ("addopts", "required_plugins"))
        return PytestConfig(source, addopts, keys, tuple(p for p in plugins if p))
    return None


@dataclass(frozen=True)
class Option:
    tokens: tuple[str, ...]  # the option and its value, as given
    distribution: str | None  # the plugin that defines it; None for pytest's own
    known: bool  # pytest's or a plugin's in the tables
    module: str | None = None  # the plugin module a `-p` names


def _option(tokens: tuple[str, ...], index: int) -> tuple[Option, int]:
    """The option at `index` and the index after it (and its value)."""
    token = tokens[index]
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    name, inline = (token.split("=", 1)[0], True) if "=" in token else (token, False)
    if token.startswith("-") and not token.startswith("--") and len(token) > 2:
        name, inline = token[:2], True  # `-n4`, `-ra`, `-pxdist`, `-vv`
    if name == "-p":
        module = token[2:] if inline else following or ""
        module = module.lstrip("=")
        used = 1 if inline else 2
        dist = PLUGIN_MODULES.get(module)
        known = bool(dist) or module.startswith("no:") or module in BUILTIN_MODULES
        return Option(tokens[index:index + used], dist, known, module), index + used
    if name in PLUGIN_OPTIONS:
        dist, arity = PLUGIN_OPTIONS[name]
        takes = not inline and (arity == 1 or (arity == OPTIONAL and following and not following.startswith("-")))
        used = 2 if takes and following is not None else 1
        return Option(tokens[index:index + used], dist, True), index + used
    for prefix, dist in PLUGIN_PREFIXES.items():
        if name.startswith(prefix):
            return Option((token,), dist, True), index + 1
    if name in BUILTIN_WITH_VALUE:
        used = 1 if inline else 2
        return Option(tokens[index:index + used], None, True), index + used
    known = name in BUILTIN_FLAGS or (len(name) == 2 and name[1] in "vqxls") or not token.startswith("-")
    return Option((token,), None, known), index + 1


def plugin_of_option(option: str) -> str | None:
    """The distribution that provides a pytest command-line option (`--timeout`, `--cov=pkg`, `-n4`),
    None for pytest's own and for options the tables do not know (a repair reads a UsageError's)."""
    return _option((option,), 0)[0].distribution


def parse_addopts(tokens: Iterable[str]) -> list[Option]:
    """`addopts` as options, each with its value."""
    tokens = tuple(tokens)
    options, index = [], 0
    while index < len(tokens):
        option, index = _option(tokens, index)
        options.append(option)
    return options


def kept_addopts(
    addopts_tokens: Iterable[str], installable_plugins: Iterable[str], local_options: Iterable[str] = ()
) -> tuple[list[str], list[str]]:
    """`addopts` split into the tokens kept and those dropped: coverage always, a plugin's option
    when its distribution is not in `installable_plugins`, an option nobody here knows unless a
    conftest.py of the repository adds it, or a `-p` module it has (`local_options`); values go with
    their option."""
    plugins = {normalised(p) for p in installable_plugins}
    local = set(local_options)
    kept: list[str] = []
    dropped: list[str] = []
    for option in parse_addopts(addopts_tokens):
        name = option.tokens[0].split("=", 1)[0]
        usable = option.known and (option.distribution is None or normalised(option.distribution) in plugins)
        if option.distribution == COVERAGE or not (usable or name in local or option.module in local):
            dropped += option.tokens
        else:
            kept += option.tokens
    return kept, dropped


def _key_distribution(key: str) -> str | None:
    for name, dist in PLUGIN_INI_KEYS.items():
        if key == name or key.lower() == name.lower() or (name.endswith("-") and key.startswith(name)):
            return dist
    return None


def needed_plugins(config: PytestConfig) -> list[tuple[str, str]]:
    """The distributions the configuration needs, each with where it is asked for: `required_plugins`
    (as written) and the plugins of its ini keys and of its `addopts` options, coverage's excepted
    (its options are dropped)."""
    found = [(r, f"{config.source} required_plugins") for r in config.required_plugins]
    found += [(d, f"{config.source} {key}") for key in config.keys if (d := _key_distribution(key))]
    found += [(o.distribution, f"{config.source} addopts") for o in parse_addopts(config.addopts) if o.distribution]
    seen: set[str] = set()
    unique = []
    for requirement, source in found:
        name = normalised(re.split(r"[<>=!~;\[ ]", requirement)[0])
        if name != COVERAGE and name not in seen:
            seen.add(name)
            unique.append((requirement, source))
    return unique


# plugins that run a tool the environment otherwise leaves out (declared_needs.NOT_FOR_TESTS)
PLUGIN_TOOLS = {
    "pytest-flake8": "flake8", "pytest-mypy": "mypy", "pytest-black": "black", "pytest-isort": "isort",
    "pytest-pylint": "pylint", "pytest-ruff": "ruff",
}  # fmt: skip


_ADDOPTION = re.compile(r"addoption\(\s*[\"'](-[-\w]+)[\"']")
CONFTESTS = ("conftest.py", "tests/conftest.py", "test/conftest.py", "testing/conftest.py", "src/conftest.py")


def conftest_options(read: Read) -> list[str]:
    """The options the repository's own conftest.py files add (`parser.addoption("--slow")`)."""
    return [m for path in CONFTESTS for m in _ADDOPTION.findall(read(path) or "")]


def override_addopts(kept: Iterable[str]) -> str:
    """pytest's `-o addopts=...` argument for `kept`, quoted for the shell."""
    return "-o " + shlex.quote("addopts=" + " ".join(shlex.quote(t) for t in kept))
