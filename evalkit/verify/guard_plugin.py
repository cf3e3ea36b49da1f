"""evalkit's guard: a pytest plugin loaded (with `-p`, under a random module name) into the hidden
test run inside the scoring sandbox. Never imported by evalkit itself: its source, and its parts
(`guard_runner.py`, `guard_runtime.py`, `guard_bodies.py`, loaded from its own folder), are written into the
sandbox, like the command server's. Standard library and pytest only (3.10 to 9: the shipped
suites span them).

Its evidence leaves the test process as it is made: each report pytest makes (but a passed
set-up or teardown, which changes no outcome), each watched body's evidence at its teardown, each
runtime event of the audit hook, and the whole report last, go through the channel
(`guard_runtime.open_channel`) to evalkit's collector, run as root; the JSON file at
EVALKIT_GUARD_REPORT is a copy evalkit compares, never trusts. What it reports:
- each test's outcome as pytest reported it (compared with the JUnit file, and the JUnit file's
  sha256 at the end, with the file evalkit reads afterwards);
- every plugin registered (conftest files included) with the file it came from and its sha256,
  and the ini file pytest used;
- the runner watch (`guard_runner`): pytest's and unittest's outcome functions still their own,
  every runner member compared by identity at the end, plugins registered behind the plugin
  manager's back, hook functions with no file;
- evidence that each watched test's own body ran, independent of every report: the test files,
  read (and checked against the sha256 evalkit gave) when the plugin loads, before any code under
  test, are compiled here as pytest compiles them (asserts rewritten or not); during each watched
  test's call phase a trace function looks for the frames of exactly those code objects, and
  whether each ended on a return instruction (not an exception). A body that runs once (marks
  only, the usual case) is caught as it starts and its frame read at teardown, with tracing off
  in between: the test runs at full speed. A decorated one (hypothesis, a retry) is traced to the
  end of its call phase. The trace function being still in place after each call is checked too;
- the runtime events an in-process forger needs (`guard_runtime.install_audit`), and the processes
  left running at the end, with the spawns behind them.
Processes of the same user left at the end are killed (inside a sandbox only, EVALKIT_SANDBOX=1
read when the plugin loads, and never as root: on a host it would SIGKILL every other process of
the machine, the Docker engine included).
"""

import ast
import dis
import hashlib
import importlib.util
import inspect
import json
import os
import sys
import types
import unittest  # noqa: F401  (imported now, so that its modules are watched from the start)

import pytest

try:  # taken now, before any code under test can replace it
    from _pytest.assertion import rewrite as _rewrite_module
    from _pytest.assertion.rewrite import rewrite_asserts as _rewrite_asserts
except ImportError:  # pragma: no cover - every supported pytest has it
    _rewrite_module = _rewrite_asserts = None
_REWRITE_TAKES_SOURCE = _rewrite_asserts is not None and "source" in inspect.signature(_rewrite_asserts).parameters

REPORT = os.environ.get("EVALKIT_GUARD_REPORT", "")
WATCH = os.environ.get("EVALKIT_GUARD_WATCH", "")  # JSON: {"tests": [ids], "files": {path: sha256}, "changed": [paths]}
CHANNEL = os.environ.get("EVALKIT_GUARD_CHANNEL", "")  # the collector's socket
_settrace, _gettrace, _FRAME, _CODE = sys.settrace, sys.gettrace, types.FrameType, types.CodeType
# The trace function while a watched body runs: for each frame it starts, getattr(frame, "call",
# None) is None (no frame has that attribute), so callees are not traced, at the cost of a C call.
_QUIET = getattr
_RETURNS = frozenset(dis.opmap[name] for name in ("RETURN_VALUE", "RETURN_CONST") if name in dis.opmap)
KILL_STRAYS = os.environ.get("EVALKIT_SANDBOX") == "1" and os.getuid() != 0
RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
_HERE = os.path.dirname(os.path.abspath(__file__))


def _part(name):
    """One of the guard's parts, from this plugin's own folder (never from sys.path)."""
    spec = importlib.util.spec_from_file_location(__name__ + "_" + name, os.path.join(_HERE, "guard_%s.py" % name))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # watched with the runner: a part replaced is seen
    spec.loader.exec_module(module)
    return module


_runner, _runtime, _bodies = _part("runner"), _part("runtime"), _part("bodies")
_code_file = _runner.code_file

_state = {
    "outcomes": {},
    "collect_errors": [],
    "plugins": {},
    "tampered": [],
    "inifile": None,
    "finished": False,
    "ran": {},  # watched test id -> [frames of its own code started, of those that returned]
    "unresolved": [],  # watched tests run with no function of that name in their file as evalkit wrote it
    "sources_changed": [],  # watched test files whose bytes were not evalkit's when this plugin loaded
    "trace_lost": [],  # tests after whose call the trace function was no longer this plugin's
    "runner_changed": [],  # runner attributes replaced since this plugin loaded
    "runner_changed_at_start": [],  # ... before the first conftest, by code that is not pytest's own
    "imported_at_start": [],  # files of the modules imported by then, when anything changed then
    "plugins_unannounced": [],  # registered without pytest_plugin_registered
    "hook_origins": {},  # "hook of plugin" -> the file its function came from ("" for none)
    "runtime": [],  # the audit hook's events (guard_runtime)
    "strays": [],  # spawns behind the processes left running at the end, when any were
    "junit_sha256": None,  # the JUnit file as pytest left it
}
_announced = []  # every plugin object pytest_plugin_registered saw (kept alive: ids stay theirs)


def _check_critical(moment):
    _runner.check_critical(_state, moment)


def _sha256(path):
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def _base_id(test_id):
    """`t.py::C::test_x[1]` -> `t.py::C::test_x`."""
    head, sep, tail = test_id.rpartition("::")
    return head + sep + tail.split("[", 1)[0]


def _read_watch():
    """The watched tests and their files' bytes, read now: when pytest loads this plugin (`-p`),
    no test module, conftest or package under test has been imported yet."""
    try:
        with open(WATCH) as handle:
            watch = json.load(handle)
    except (OSError, ValueError):
        return [], {}, []
    sources = {}
    for path, digest in (watch.get("files") or {}).items():
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except OSError:
            continue
        if hashlib.sha256(raw).hexdigest() == digest:
            sources[path] = raw
        else:
            _state["sources_changed"].append(path)
    return [_base_id(t) for t in watch.get("tests") or []], sources, watch.get("changed") or []


_watched, _sources, _changed = _read_watch()
_watched = frozenset(_watched)
_send = _runtime.open_channel(CHANNEL) or (lambda message: None)
_send({"kind": "hello", "pid": os.getpid()})
_scratch = os.path.dirname(os.path.dirname(os.path.realpath(REPORT))) if REPORT else ""
_junit_writer = os.path.join(os.path.dirname(sys.modules["_pytest"].__file__), "junitxml.py")
_writers = [os.path.realpath(p) for p in (__file__, _junit_writer)]
_protected = [
    os.path.realpath(os.path.dirname(sys.modules[name].__file__))
    for name in ("_pytest", "pytest", "pluggy", "unittest")
    if getattr(sys.modules.get(name), "__file__", None)
]
_spawns = (
    _runtime.install_audit(_send, _state["runtime"].append, _changed, _scratch, _writers, _protected)
    if _scratch and WATCH
    else (lambda: [])
)
_modules = {}  # (path, asserts rewritten) -> the module's code as compiled here, None if it does not
_config = []  # pytest's config, once configured (assertion rewriting reads its settings)


def _codes(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, _CODE):
            yield from _codes(const)


def _rewritten(path, filename, config):
    """The test file as evalkit wrote it, with its asserts rewritten as pytest rewrites them."""
    raw = _sources[path]
    tree = ast.parse(raw, filename=filename)
    _note_run_once(path, tree)  # before the rewrite changes it
    if _REWRITE_TAKES_SOURCE:  # pytest >= 5.4
        _rewrite_asserts(tree, raw, filename, config)
    else:
        _rewrite_asserts(tree, filename, config)
    return compile(tree, filename, "exec", dont_inherit=True)


def _module(path, rewritten):
    """The test file as evalkit wrote it, compiled as pytest's assertion rewriting does (what it
    runs in the usual case: usually the very code pytest imported, see _rewrite_test) or as plain
    Python does; compiled on first need."""
    key = (path, rewritten)
    if key not in _modules:
        _modules[key] = None
        filename = os.path.abspath(path)
        try:
            if not rewritten:
                _modules[key] = compile(_sources[path], filename, "exec", dont_inherit=True)
            elif _rewrite_asserts is not None:
                _modules[key] = _rewritten(path, filename, _config[0] if _config else None)
        except Exception:  # a test file that does not compile here reports its own error
            pass
    return _modules[key]


_by_realpath = {os.path.realpath(path): path for path in _sources}
_pytests_rewrite_test = getattr(_rewrite_module, "_rewrite_test", None)


def _rewrite_test(*args):
    """pytest's own `_rewrite_test` (its import hook's compile of a test module), for a watched
    file compiled here from the bytes evalkit wrote: pytest imports exactly the code the evidence
    expects, and the asserts are rewritten once, not twice (the rewrite is most of the guard's
    cost). Every other file, and any surprise, goes to pytest's. The arguments: (fn, config)
    since pytest 5, (config, fn) before; fn a path, a str, or a py.path."""
    config, fn = args if _REWRITE_CONFIG_FIRST else args[::-1]
    try:
        filename = getattr(fn, "strpath", None) or str(fn)
        path = _by_realpath.get(os.path.realpath(filename))
        if path is not None and (path, True) not in _modules and _rewrite_asserts is not None:
            stat = fn.stat() if hasattr(fn, "stat") else os.stat(filename)
            _modules[(path, True)] = code = _rewritten(path, filename, config)
            return stat, code
    except Exception:
        pass
    return _pytests_rewrite_test(*args)


if _pytests_rewrite_test is not None and _sources:
    _REWRITE_CONFIG_FIRST = next(iter(inspect.signature(_pytests_rewrite_test).parameters)) == "config"
    _rewrite_module._rewrite_test = _rewrite_test


_found = {}  # (test id, asserts rewritten) -> _expected's answer (parametrized cases ask again)


def _expected(test_id, rewritten):
    """The code objects a watched test's body may run as, in its module compiled one way."""
    key = (test_id, rewritten)
    if key not in _found:
        _found[key] = _look_up(test_id, rewritten)
    return _found[key]


def _look_up(test_id, rewritten):
    path, *names = test_id.split("::")
    module = _module(path, rewritten)
    if module is None:
        return []
    level = [module]
    for name in names:  # class bodies, then the function, as the id names them
        level = [c for parent in level for c in parent.co_consts if isinstance(c, _CODE) and c.co_name == name]
    # a method inherited from another class of the module: any function of that name
    return level or [c for c in _codes(module) if c.co_name == names[-1] and c is not module]


_run_once = {}  # path -> names of the functions in it whose body runs once per call (_runs_once)


def _note_run_once(path, tree):
    _run_once[path] = _bodies.run_once(tree)


def _runs_once(test_id):
    """Whether the watched test's body runs exactly once in its call phase: a plain (not async)
    function whose every definition of that name in its file carries marks only. Anything else
    (hypothesis's @given, a retry decorator) may run it again, or raise on purpose, first."""
    path, *names = test_id.split("::")
    if path not in _run_once:  # not parsed for the rewrite
        try:
            _note_run_once(path, ast.parse(_sources[path]))
        except (KeyError, SyntaxError, ValueError):
            _run_once[path] = frozenset()
    return bool(names) and names[-1] in _run_once[path]


class _Watch:
    """The trace function of one test's call phase: counts the frames of the test's own code and
    those that returned. `previous` (a coverage tracer, say) is still called for every event, and
    put back after. The module compiled the other way is tried when the first does not match."""

    def __init__(self, test_id, codes, previous):
        self.base = _base_id(test_id)
        self.counts = _state["ran"].setdefault(test_id, [0, 0])
        self.name, self.codes, self.previous = self.base.rsplit("::", 1)[-1], codes, previous
        self.plain_tried = False
        # a body that runs once, with no other tracer: its frame is kept and tracing stops as it
        # starts, so the body and everything it calls run at full speed (a trace function, even
        # one that returns at once, puts the interpreter on its slow path); how the frame ended
        # is read from its last instruction at teardown
        self.once = previous is None and _runs_once(self.base)
        self.frames = []

    def __call__(self, frame, event, arg):
        inner = self.previous(frame, event, arg) if self.previous is not None else None
        code = frame.f_code
        if event == "call" and code.co_name == self.name and type(frame) is _FRAME and self._mine(code):
            if self.once:
                self.frames.append(frame)
                _settrace(None)
                return None
            self.counts[0] += 1
            if self.previous is None:  # alone: the body's own calls go to a C function, cheaply
                frame.f_trace_lines = False
                _settrace(_QUIET)
            return self._local(inner)
        return inner

    def _mine(self, code):
        if any(code == expected for expected in self.codes):
            return True
        if not self.plain_tried:
            self.plain_tried = True
            self.codes = self.codes + _expected(self.base, rewritten=False)
            return any(code == expected for expected in self.codes)
        return False

    def _local(self, inner):
        counts, watch = self.counts, self

        def local(frame, event, arg):
            nonlocal inner
            if inner is not None:
                inner = inner(frame, event, arg)
            if event == "return":
                if frame.f_code.co_code[frame.f_lasti] in _RETURNS:
                    counts[1] += 1
                if watch.previous is None:
                    _settrace(watch)  # watching for the body's next run (hypothesis runs it again)
            return local

        return local


_tracing = {}  # test id -> its _Watch while its call phase runs


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    base = _base_id(item.nodeid)
    if base not in _watched:
        return
    path = base.split("::", 1)[0]
    codes = _expected(base, rewritten=True) if path in _sources and "::" in base else []
    if not codes and path in _sources and "::" in base:
        codes = _expected(base, rewritten=False)
    if not codes:  # not in its file as evalkit wrote it (or the file was not): reports alone
        _state["unresolved"].append(item.nodeid)
        return
    watch = _tracing[item.nodeid] = _Watch(item.nodeid, codes, _gettrace())
    _settrace(watch)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_teardown(item):
    watch = _tracing.pop(item.nodeid, None)
    if watch is None:
        return
    for frame in watch.frames:  # ended: its last instruction says whether on a return
        watch.counts[0] += 1
        watch.counts[1] += frame.f_code.co_code[frame.f_lasti] in _RETURNS
    if not watch.frames and _gettrace() is not watch and _gettrace() is not _QUIET:
        _state["trace_lost"].append(item.nodeid)
    watch.frames.clear()
    _settrace(watch.previous)
    _send({"kind": "ran", "test": item.nodeid, "counts": list(watch.counts)})


def _write():
    if not REPORT:
        return
    temporary = REPORT + ".tmp"
    with open(temporary, "w") as handle:
        json.dump(_state, handle)
    os.replace(temporary, REPORT)


def pytest_plugin_registered(plugin, manager):
    _announced.append(plugin)
    path = getattr(plugin, "__file__", None)
    name = manager.get_name(plugin) or getattr(plugin, "__name__", repr(plugin))
    if path and name not in _state["plugins"]:
        _state["plugins"][name] = {"file": os.path.realpath(path), "sha256": _sha256(path)}


def pytest_load_initial_conftests(early_config):
    """After pytest's own start-up and the installed plugins' imports (its legacy-path plugin's
    implementation is `tryfirst`) and before the first conftest (loaded by pytest's `trylast`
    one): what changed in the runner since this plugin loaded, and what code had run by then."""
    global _runner_before_conftests
    _runner_before_conftests = _runner.compare_runner(_state, _RUNNER_AT_LOAD, _MODULES_AT_LOAD, at_start=True)


def pytest_configure(config):
    inipath = getattr(config, "inipath", None) or getattr(config, "inifile", None)
    if inipath:
        _state["inifile"] = {"file": os.path.realpath(str(inipath)), "sha256": _sha256(str(inipath))}
    _check_critical("start")
    _config.append(config)


def pytest_collectreport(report):
    if report.failed:
        _state["collect_errors"].append(report.nodeid)


def pytest_runtest_logreport(report, _send=_send):
    if report.when == "call":
        status = "passed" if report.passed else ("skipped" if report.skipped else "failed")
    elif report.failed:
        status = "error"
    elif report.skipped:
        status = "skipped"
    else:
        status = "passed"
    if status != "passed" or report.when == "call":  # a passed set-up or teardown changes no outcome
        _send({"kind": "report", "test": report.nodeid, "when": report.when, "status": status})
    previous = _state["outcomes"].get(report.nodeid)
    if previous is None or RANK[status] > RANK[previous]:
        _state["outcomes"][report.nodeid] = status


def pytest_sessionfinish(session, exitstatus):
    _check_critical("end")
    _state["finished"] = True


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config, _send=_send):
    _check_critical("end")
    _runner.compare_runner(_state, _runner_before_conftests or _RUNNER_AT_LOAD, _MODULES_AT_LOAD)
    _runner.check_plugins(_state, _announced, config.pluginmanager)
    left = _runner.strays()
    if left:
        _state["strays"] = [len(left)] + [s for s in _spawns() if s.get("where")][:5]
    if KILL_STRAYS:
        _runner.kill(left)
    xmlpath = getattr(config.option, "xmlpath", None)
    _state["junit_sha256"] = _sha256(xmlpath) if xmlpath else None
    # The collector's copy first: whatever runs in `_write` (code under test can replace it) can
    # then change only the file, which is checked against this message.
    _send({"kind": "final", "state": _state})
    _write()


_RUNNER_AT_LOAD = _runner.Snapshot(__name__)
_MODULES_AT_LOAD = frozenset(sys.modules)
_runner_before_conftests = None
