"""Why a candidate's tests did not run, as a class, and that class's next fix (pure).

A repository declares its test needs in many places, and reading them all still misses some: a
plugin only CI installs, an import whose distribution has another name, a pin that no longer
installs on the base's Python, a C extension without a compiler. Gather does not reject on the
first failure. The failing run's output is read into a `Diagnosis` (the class, and what it names:
the option, the module, the header), and the class says the next `Fix` to try, in order:

- **unknown option** (pytest's `unrecognized arguments`): install the plugin that provides it,
  then drop the option from `addopts` (recorded);
- **missing plugin** (a fixture or marker that only a plugin defines, `async def` tests with no
  async plugin): install that plugin;
- **missing module** (`ModuleNotFoundError` of a module that is neither the project's nor the
  standard library's): install the distribution that provides it (pipreqs' import-name table,
  `import_names.txt`, else the module's own name);
- **dependency too new** (`cannot import name` / `has no attribute` of a third-party module): hold
  PyPI to the commit's own date instead of its era's end;
- **interpreter too new** (what a later Python removed: `collections` ABC aliases, `imp`,
  `inspect.getargspec`, old pytest's `__spec__`; or a package that refuses the base's Python): the
  next older Python base;
- **pytest too new** (a conftest hook or API a later pytest removed: pluggy's
  `PluginValidationError`, `module 'pytest' has no attribute`): the previous pytest major;
- **build needs a compiler or system library** (`gcc` missing, `Python.h` or another header not
  found): the compiler, the Python headers and the Debian package of the header;
- **not installable** (`No matching distribution`): an older Python base, then the requirement left
  out (a test extra pinned to a release PyPI lost).

A test that opens a file of the repository's own that the tree lacks (data in a git submodule,
which no offline build can fetch, or a file a build step generates) is **test data not in the
tree**: named, with no fix. Each fix is tried once; a class with no fix left, or an unknown
class, ends the repair and the candidate is rejected naming the class (the gather report counts
losses by class).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cache
from importlib import resources

from evalkit.gather.project_metadata import normalised
from evalkit.wording import without_colour


class LossClass(StrEnum):
    UNKNOWN_OPTION = "unknown option"
    MISSING_PLUGIN = "missing plugin"
    MISSING_MODULE = "missing module"
    DEPENDENCY_TOO_NEW = "dependency too new"
    PYTHON_TOO_NEW = "interpreter too new"
    RUNNER_TOO_NEW = "pytest too new"
    MISSING_DATA = "test data not in the tree"  # a git submodule or a generated file: nothing to install
    NEEDS_BUILD = "build needs a compiler or system library"
    NOT_INSTALLABLE = "requirement not installable"
    OTHER = "other"  # the tests did not run for a reason no class names


@dataclass(frozen=True)
class Diagnosis:
    loss: LossClass
    subject: str = ""  # the option, module, distribution or header the failure names
    evidence: str = ""  # the line it was read from


@dataclass(frozen=True)
class Fix:
    """One change to an environment; `describe()` is the decision record's line."""

    loss: LossClass
    add_requirements: tuple[str, ...] = ()
    drop_requirements: tuple[str, ...] = ()  # normalised names
    drop_options: tuple[str, ...] = ()  # addopts options dropped (with their values)
    apt_packages: tuple[str, ...] = ()
    older_python: bool = False
    hold_to_commit_date: bool = False
    runner_ceiling: str = ""  # an older pytest: the new ceiling ("<8")

    def describe(self) -> str:
        done = [
            *(f"install {r}" for r in self.add_requirements),
            *(f"leave out {r}" for r in self.drop_requirements),
            *(f"drop {o} from addopts" for o in self.drop_options),
            *([f"apt-get install {' '.join(self.apt_packages)}"] if self.apt_packages else []),
            *(["an older Python base"] if self.older_python else []),
            *(["PyPI held to the commit's date"] if self.hold_to_commit_date else []),
            *([f"pytest{self.runner_ceiling}"] if self.runner_ceiling else []),
        ]
        return f"{self.loss}: " + ", ".join(done)


@dataclass(frozen=True)
class Tried:
    """What an environment already has or was given, so no fix is tried twice."""

    requirements: Collection[str] = ()  # normalised names
    dropped_options: Collection[str] = ()
    apt_packages: Collection[str] = ()
    older_bases_left: int = 0  # Python bases older than the one in use
    held_to_commit_date: bool = False
    older_runner: str = ""  # the next lower pytest ceiling there is ("" when none)
    fixes: tuple[Fix, ...] = field(default_factory=tuple)


# --- reading the failure -------------------------------------------------------------------------

_UNRECOGNISED = re.compile(r"error: unrecognized arguments: (.+)$", re.M)
_NO_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '?([\w.]+)'?", re.M)
_CANNOT_IMPORT = re.compile(r"ImportError: cannot import name '?(\w+)'? from '?([\w.]+)'?", re.M)
_NO_ATTRIBUTE = re.compile(r"AttributeError: module '([\w.]+)' has no attribute '(\w+)'", re.M)
_RUNNER_SIGNS = re.compile(
    r"PluginValidationError.*|AttributeError: module '_?pytest' has no attribute '\w+'|unknown hook '\w+'", re.M
)
_FIXTURE = re.compile(r"fixture '(\w+)' not found", re.M)
_MARKER = re.compile(r"'(\w+)' not found in `markers` configuration option", re.M)
_ASYNC = re.compile(r"async def functions are not natively supported", re.M)
_OLD_PYTHON_SIGNS = re.compile(
    r"KeyError: '__spec__'|required field \"lineno\" missing from alias"
    r"|requires a different Python|module 'ast' has no attribute '(?:Str|Num|NameConstant)'"
    r"|module 'inspect' has no attribute 'getargspec'|AttributeError: module 'pkgutil' has no attribute 'ImpImporter'"
    r"|cannot import name '\w+' from 'collections' |No module named 'distutils'|No module named 'imp'",
    re.M,
)
_COMPILER = re.compile(
    r"error: command '[^']*(?:gcc|cc|g\+\+|clang)' failed|(?:gcc|cc|c\+\+|g\+\+): (?:command )?not found"
    r"|unable to execute '[^']*gcc'|can't find Rust compiler|cargo: not found",
    re.M,
)
_HEADER = re.compile(r"fatal error: ([\w./+-]+\.h): No such file", re.M)
_NO_DATA = re.compile(r"FileNotFoundError: \[Errno 2\] No such file or directory: '/workspace/[^']+'", re.M)
_NO_DISTRIBUTION = re.compile(r"No matching distribution found for ([A-Za-z0-9][\w.\-]*)", re.M)

# the Debian package of a missing header (Debian's names; a header no row names gets the compiler only)
_HEADER_PACKAGES = {
    "Python.h": "python3-dev",
    "ffi.h": "libffi-dev",
    "openssl/": "libssl-dev",
    "libxml/": "libxml2-dev",
    "libxslt/": "libxslt1-dev",
    "yaml.h": "libyaml-dev",
    "zlib.h": "zlib1g-dev",
    "jpeglib.h": "libjpeg-dev",
    "png.h": "libpng-dev",
    "sqlite3.h": "libsqlite3-dev",
    "bzlib.h": "libbz2-dev",
    "lzma.h": "liblzma-dev",
    "pq-fe.h": "libpq-dev",
    "mysql.h": "default-libmysqlclient-dev",
    "curl/": "libcurl4-openssl-dev",
    "ncurses.h": "libncurses-dev",
    "readline/": "libreadline-dev",
}
_COMPILER_PACKAGES = ("build-essential", "python3-dev", "pkg-config")

# fixtures and markers that only a plugin defines (pytest's own, such as tmp_path, are never missing)
PLUGIN_FIXTURES = {
    "mocker": "pytest-mock",
    "benchmark": "pytest-benchmark",
    "freezer": "pytest-freezer",
    "httpserver": "pytest-httpserver",
    "httpx_mock": "pytest-httpx",
    "requests_mock": "requests-mock",
    "aiohttp_client": "pytest-aiohttp",
    "aiohttp_server": "pytest-aiohttp",
    "event_loop": "pytest-asyncio",
    "datadir": "pytest-datadir",
    "shared_datadir": "pytest-datadir",
    "snapshot": "syrupy",
    "subtests": "pytest-subtests",
    "time_machine": "time-machine",
    "faker": "Faker",
    "respx_mock": "respx",
    "xprocess": "pytest-xprocess",
    "lazy_fixture": "pytest-lazy-fixture",
    "anyio_backend": "anyio",
}
PLUGIN_MARKERS = {
    "asyncio": "pytest-asyncio",
    "anyio": "anyio",
    "trio": "pytest-trio",
    "timeout": "pytest-timeout",
    "benchmark": "pytest-benchmark",
    "freeze_time": "pytest-freezer",
    "django_db": "pytest-django",
    "flaky": "flaky",
    "xdist_group": "pytest-xdist",
    "httpx_mock": "pytest-httpx",
    "vcr": "pytest-recording",
    "dependency": "pytest-dependency",
    "order": "pytest-order",
    "mpl_image_compare": "pytest-mpl",
}


@cache
def import_names() -> dict[str, str]:
    """Import name → distribution, from pipreqs' table (vendored: `import_names.txt`, with its
    provenance in the first lines), for the modules whose distribution is named otherwise."""
    table: dict[str, str] = {}
    text = resources.files("evalkit.gather").joinpath("import_names.txt").read_text()
    for line in text.splitlines():
        if line and not line.startswith("#") and ":" in line:
            module, distribution = line.split(":", 1)
            table.setdefault(module.strip(), distribution.strip())
    return table


def distribution_of(module: str) -> str:
    """The distribution that provides the top-level `module` (pipreqs' table, else its own name)."""
    top = module.split(".")[0]
    return import_names().get(top, top).replace("_", "-")


def _standard(module: str) -> bool:
    return module.split(".")[0] in sys.stdlib_module_names


def diagnose(output: str, local: Callable[[str], bool] = lambda _name: False) -> Diagnosis | None:
    """The class of an environment failure in a run's or a build's `output`, None when it shows
    none (the tests ran and failed, or the change broke them). `local(top_module)`: the name is
    the project's own (its import failing is the change's business, never a dependency)."""
    text = without_colour(output)
    if found := _UNRECOGNISED.search(text):
        return Diagnosis(LossClass.UNKNOWN_OPTION, found[1].strip(), found[0])
    if found := _RUNNER_SIGNS.search(text):
        return Diagnosis(LossClass.RUNNER_TOO_NEW, "", found[0])
    if found := _OLD_PYTHON_SIGNS.search(text):
        return Diagnosis(LossClass.PYTHON_TOO_NEW, "", found[0])
    if found := _COMPILER.search(text):
        return Diagnosis(LossClass.NEEDS_BUILD, "", found[0])
    if found := _HEADER.search(text):
        return Diagnosis(LossClass.NEEDS_BUILD, found[1], found[0])
    if found := _NO_DISTRIBUTION.search(text):
        return Diagnosis(LossClass.NOT_INSTALLABLE, found[1], found[0])
    for found in _NO_MODULE.finditer(text):
        module = found[1]
        if not local(module.split(".")[0]) and not _standard(module):
            # Python names the first part it cannot find: a missing submodule's package is there, in
            # a release that no longer has it (`marshmallow.compat`, gone in marshmallow 3)
            loss = LossClass.DEPENDENCY_TOO_NEW if "." in module else LossClass.MISSING_MODULE
            return Diagnosis(loss, module, found[0])
    if found := _NO_DATA.search(text):  # tomlkit's tests read `tests/toml-test`, a submodule offline
        return Diagnosis(LossClass.MISSING_DATA, "", found[0])
    for pattern, table in ((_FIXTURE, PLUGIN_FIXTURES), (_MARKER, PLUGIN_MARKERS)):
        for found in pattern.finditer(text):
            if found[1] in table:
                return Diagnosis(LossClass.MISSING_PLUGIN, table[found[1]], found[0])
    if found := _ASYNC.search(text):
        return Diagnosis(LossClass.MISSING_PLUGIN, "pytest-asyncio", found[0])
    for found in (*_CANNOT_IMPORT.finditer(text), *_NO_ATTRIBUTE.finditer(text)):
        module = found[2] if found.re is _CANNOT_IMPORT else found[1]
        if not local(module.split(".")[0]) and not _standard(module):
            return Diagnosis(LossClass.DEPENDENCY_TOO_NEW, module, found[0])
    return None


# --- the next fix ---------------------------------------------------------------------------------


def _options(subject: str) -> list[str]:
    return [token for token in subject.split() if token.startswith("-")]


def next_fix(
    diagnosis: Diagnosis, tried: Tried, plugin_of_option: Callable[[str], str | None] = lambda _o: None
) -> Fix | None:
    """The class's next fix not tried yet, None when none is left. `plugin_of_option(option)`: the
    distribution that provides a pytest option, when one is known."""
    have = {normalised(r) for r in tried.requirements}
    loss = diagnosis.loss
    if loss is LossClass.UNKNOWN_OPTION:
        options = _options(diagnosis.subject)
        plugins = {p for o in options if (p := plugin_of_option(o)) and normalised(p) not in have}
        if plugins:
            return Fix(loss, add_requirements=tuple(sorted(plugins)))
        left = tuple(o for o in options if o.split("=")[0] not in tried.dropped_options)
        return Fix(loss, drop_options=tuple(o.split("=")[0] for o in left)) if left else None
    if loss in (LossClass.MISSING_MODULE, LossClass.MISSING_PLUGIN):
        wanted = distribution_of(diagnosis.subject) if loss is LossClass.MISSING_MODULE else diagnosis.subject
        return None if normalised(wanted) in have else Fix(loss, add_requirements=(wanted,))
    if loss is LossClass.DEPENDENCY_TOO_NEW:
        if not tried.held_to_commit_date:
            return Fix(loss, hold_to_commit_date=True)
        return Fix(loss, older_python=True) if tried.older_bases_left else None
    if loss is LossClass.PYTHON_TOO_NEW:
        if tried.older_bases_left:
            return Fix(loss, older_python=True)
        return None if tried.held_to_commit_date else Fix(loss, hold_to_commit_date=True)
    if loss is LossClass.RUNNER_TOO_NEW:
        return Fix(loss, runner_ceiling=tried.older_runner) if tried.older_runner else None
    if loss is LossClass.NEEDS_BUILD:
        wanted = [*_COMPILER_PACKAGES]
        wanted += [p for h, p in _HEADER_PACKAGES.items() if diagnosis.subject.startswith(h) or diagnosis.subject == h]
        new = tuple(p for p in dict.fromkeys(wanted) if p not in tried.apt_packages)
        return Fix(loss, apt_packages=new) if new else None
    if loss is LossClass.NOT_INSTALLABLE:
        if tried.older_bases_left and not any(f.older_python for f in tried.fixes if f.loss is loss):
            return Fix(loss, older_python=True)
        name = normalised(diagnosis.subject)
        return Fix(loss, drop_requirements=(name,)) if name in have else None
    return None
