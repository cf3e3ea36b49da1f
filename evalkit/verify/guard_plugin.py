"""evalkit's guard: a pytest plugin loaded (with `-p`, under a random module name) into the hidden
test run inside the scoring sandbox. Never imported by evalkit itself: its source is written into
the sandbox, like the command server's. Standard library and pytest only (3.10 to 9: the shipped
suites span them).

It reports, to the JSON file named by EVALKIT_GUARD_REPORT, what the harness cannot see from the
JUnit file alone:
- each test's outcome as pytest reported it (compared with the JUnit file, which code running in
  the test process could rewrite afterwards);
- every plugin registered (conftest files included) with the file it came from and its sha256 at
  registration, so a conftest or plugin that appeared after evalkit put the test files back (an
  install step running the candidate's setup code, say) is seen;
- the ini file pytest used, with its sha256;
- pytest and unittest functions that decide outcomes but no longer come from their own module's
  file (monkeypatched by the code under test or a start-up hook), checked at start and at the end.
- evidence that each watched test's own body ran, independent of every report: the test files,
  read (and checked against the sha256 evalkit gave) when the plugin loads, before any code under
  test, are compiled here as pytest compiles them (asserts rewritten or not); during each watched
  test's call phase a trace function looks for the frames of exactly those code objects, and
  whether each ended on a return instruction (not an exception). A body that runs once (marks
  only, the usual case) is caught as it starts and its frame read at teardown, with tracing off
  in between: the test runs at full speed. A decorated one (hypothesis, a retry) is traced to the
  end of its call phase. A body swapped for another, or one that raised under a report saying
  "passed", shows here. The trace function being still in place after each call is checked too;
- a whole-runner watch: every function, and every attribute of every class, of the runner's
  modules (`_pytest`, `pytest`, `pluggy`, `unittest`, this plugin) as they were when this plugin
  loaded, compared by identity at the end; and the registered plugins and hook functions at the
  end, with the file each came from (none: made at run time), and any registered behind the
  plugin manager's back (never announced through `pytest_plugin_registered`).
A missing report means the run never reached the end through this plugin (pytest replaced,
the plugin unregistered, the process killed). The report is written once, last, in
pytest_unconfigure, after every other process of the same user that is not an ancestor of this
one has been killed: a daemon the code under test left behind cannot rewrite it afterwards, and a
JUnit file it rewrote before then disagrees with the report. That kill happens only where the
sandbox says it may (EVALKIT_SANDBOX=1 among the container's variables, read when the plugin loads,
before any code under test) and never as root: run on a host, above all as root, it would SIGKILL
every other process of the machine, the Docker engine included.
"""

import ast
import dis
import hashlib
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

REPORT = os.environ.get("EVALKIT_GUARD_REPORT", "")
WATCH = os.environ.get("EVALKIT_GUARD_WATCH", "")  # JSON: {"tests": [ids], "files": {path: sha256}}
RUNNER_PREFIXES = ("_pytest", "pytest", "pluggy", "unittest")
_settrace, _gettrace, _FRAME, _CODE = sys.settrace, sys.gettrace, types.FrameType, types.CodeType
# The trace function while a watched body runs: for each frame it starts, getattr(frame, "call",
# None) is None (no frame has that attribute), so callees are not traced, at the cost of a C call.
_QUIET = getattr
_RETURNS = frozenset(dis.opmap[name] for name in ("RETURN_VALUE", "RETURN_CONST") if name in dis.opmap)
KILL_STRAYS = os.environ.get("EVALKIT_SANDBOX") == "1" and os.getuid() != 0
RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
CRITICAL = (
    ("_pytest.reports", "TestReport.from_item_and_call"),
    ("_pytest.reports", "TestReport.__init__"),
    ("_pytest.reports", "BaseReport.passed"),
    ("_pytest.reports", "BaseReport.failed"),
    ("_pytest.runner", "call_and_report"),
    ("_pytest.runner", "runtestprotocol"),
    ("_pytest.runner", "call_runtest_hook"),
    ("_pytest.runner", "pytest_runtest_makereport"),
    ("_pytest.runner", "CallInfo.from_call"),
    ("_pytest.python", "pytest_pyfunc_call"),
    ("_pytest.python", "Function.runtest"),
    ("_pytest.skipping", "pytest_runtest_makereport"),
    ("_pytest.junitxml", "LogXML.pytest_runtest_logreport"),
    ("_pytest.junitxml", "LogXML.pytest_sessionfinish"),
    ("_pytest.junitxml", "_NodeReporter.to_xml"),
    ("_pytest.unittest", "TestCaseFunction.runtest"),
    ("_pytest.outcomes", "fail"),
    ("_pytest.outcomes", "skip"),
    ("_pytest.outcomes", "xfail"),
    ("_pytest.outcomes", "exit"),
    ("unittest.case", "TestCase.run"),
    ("unittest.case", "TestCase.__call__"),
    ("unittest.result", "TestResult.addFailure"),
    ("unittest.result", "TestResult.addError"),
)

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
}
_announced = []  # every plugin object pytest_plugin_registered saw (kept alive: ids stay theirs)


def _sha256(path):
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).hexdigest()
    except OSError:
        return None


def _code_file(obj):
    """The file a function is defined in; for a property its getter's, a classmethod its
    function's, a callable instance its class's `__call__` (pytest 9 makes `fail`, `skip`,
    `xfail` and `exit` such instances). `__wrapped__` is not followed: a wrapper made with
    functools.wraps is a replacement like any other."""
    for attr in ("fget", "__func__"):
        obj = getattr(obj, attr, obj)
    code = getattr(obj, "__code__", None)
    if code is None and not isinstance(obj, type):
        call = next((k.__dict__["__call__"] for k in type(obj).__mro__ if "__call__" in k.__dict__), None)
        code = getattr(call, "__code__", None)
    return getattr(code, "co_filename", None) if code is not None else None


def _check_critical(moment):
    for module_name, dotted in CRITICAL:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        owner, obj = module, None
        for part in dotted.split("."):
            holder = owner
            owner = holder.__dict__.get(part) if hasattr(holder, "__dict__") else None
            if owner is None:
                owner = getattr(holder, part, None)
            if owner is None:
                break
        obj = owner
        if obj is None:
            continue
        where = _code_file(obj)
        expected = getattr(module, "__file__", None)
        if expected is None:
            continue
        # every CRITICAL name is a Python function of its module: anything else is a replacement
        if where is None or os.path.realpath(where) != os.path.realpath(expected):
            name = "%s.%s" % (module_name, dotted)
            if not any(entry.startswith(name + " ") for entry in _state["tampered"]):
                _state["tampered"].append("%s now comes from %s (seen at the %s)" % (name, where, moment))


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
        return [], {}
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
    return [_base_id(t) for t in watch.get("tests") or []], sources


_watched, _sources = _read_watch()
_watched = frozenset(_watched)
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
    if "source" in inspect.signature(_rewrite_asserts).parameters:  # pytest >= 5.4
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


def _expected(test_id, rewritten):
    """The code objects a watched test's body may run as, in its module compiled one way."""
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


def _is_mark(decorator):
    """`@pytest.mark.x(...)` or `@mark.x`: marks change how often pytest collects a test, never
    how often its call phase runs the body."""
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    names.append(getattr(node, "id", ""))
    dotted = ".".join(reversed(names))
    return dotted.startswith(("pytest.mark.", "mark."))


def _note_run_once(path, tree):
    plain = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            once = isinstance(node, ast.FunctionDef) and all(_is_mark(d) for d in node.decorator_list)
            plain[node.name] = plain.get(node.name, True) and once
    _run_once[path] = frozenset(name for name, once in plain.items() if once)


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


def _runner_modules():
    me = sys.modules.get(__name__)
    for name, module in list(sys.modules.items()):
        if module is me or name.split(".")[0] in RUNNER_PREFIXES:
            yield name, module


_MEMBER_KINDS = (types.FunctionType, type, property, staticmethod, classmethod)
_PYTEST_DIR = os.path.dirname(os.path.realpath(sys.modules["_pytest"].__file__)) + os.sep


class _Snapshot:
    """The runner's module dicts, and the dicts of the classes they define, as they were: their
    keys and values held flat in a few lists, compared at the end by identity. Held flat, not as
    a copy of each dict: a thousand copies surviving into the collector's oldest generation cost
    the test run a full collection of its own (~10 ms, a third of the guard's cost on a short
    run)."""

    def __init__(self):
        self.names, self.holders, self.is_class, self.starts, self.keys, self.values = [], [], [], [], [], []
        for name, module in _runner_modules():
            namespace = getattr(module, "__dict__", None)
            if namespace is None:
                continue
            self._add(name, module, False, namespace)
            for attr, value in list(namespace.items()):
                if isinstance(value, type) and value.__module__ == name:
                    self._add(name + "." + attr, value, True, value.__dict__)
        self.starts.append(len(self.keys))

    def _add(self, name, holder, is_class, namespace):
        self.names.append(name)
        self.holders.append(holder)
        self.is_class.append(is_class)
        self.starts.append(len(self.keys))
        self.keys.extend(namespace.keys())
        self.values.extend(namespace.values())

    def changes(self):
        """(dotted name, what, the value now) for each member changed since (`_changes`)."""
        for i, name in enumerate(self.names):
            if self.is_class[i]:
                new = self.holders[i].__dict__
            else:
                new = getattr(sys.modules.get(name), "__dict__", None) or {}
            first, last = self.starts[i], self.starts[i + 1]
            keys, values = self.keys[first:last], self.values[first:last]
            if keys == list(new) and _unchanged(values, list(new.values())):
                continue
            kinds = _MEMBER_KINDS if self.is_class[i] else (types.FunctionType, type)
            for key, what in _changes(dict(zip(keys, values)), new, kinds):  # noqa: B905 (3.9 and older have no strict)
                yield name + "." + key, what, new.get(key)


def _pytests_own(member):
    """Whether a member's code comes from pytest's own files (its legacy-path plugin adds
    properties to its classes when it starts)."""
    for attr in ("fget", "__func__"):
        member = getattr(member, attr, None) or member
    code = getattr(member, "__code__", None)
    return code is not None and os.path.realpath(code.co_filename).startswith(_PYTEST_DIR)


def _unchanged(old, new):
    try:
        return old == new  # identity first, in C: only a changed value is compared further
    except Exception:
        return False


def _changes(old, new, kinds):
    """(name, what) for members of `kinds` in `old` replaced or removed in `new`, and functions,
    properties and method wrappers added (a nested class may be made on first use: py.xml's tags,
    in old pytest's JUnit writer). Data attributes are not members: pytest sets them as it runs."""
    for key, value in old.items():
        if isinstance(value, kinds) and new.get(key, _state) is not value:
            yield key, "replaced" if key in new else "removed"
    for key, value in new.items():
        if key not in old and isinstance(value, _MEMBER_KINDS) and not isinstance(value, type):
            yield key, "added"


def _compare_runner(before, at_start=False):
    """What changed in the runner since `before` (a `_Snapshot`), recorded; at start, the snapshot
    now (the end's baseline).
    `at_start`: the window before the first conftest, where pytest's own start-up and installed
    plugins (hypothesis wraps `FixtureFunctionMarker.__call__` when it is imported) change it:
    changes whose code is pytest's are dropped, the others kept apart with the files of the
    modules imported by then, for the harness to judge against the candidate's change."""
    for member, what, now in before.changes():
        entry = "%s %s" % (member, what)
        if not at_start or what == "removed":
            _state["runner_changed"].append(entry)
        elif not _pytests_own(now):
            _state["runner_changed_at_start"].append(entry)
    if at_start and _state["runner_changed_at_start"]:
        _state["imported_at_start"] = _imported_since_load()
    return _Snapshot() if at_start else None


def _imported_since_load():
    """The real paths of the modules imported since this plugin loaded."""
    files = set()
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) if name not in _MODULES_AT_LOAD else None
        if isinstance(path, str):
            files.add(os.path.realpath(path))
    return sorted(files)


_ORIGINS = {}  # a code object's file -> its real path, or "" when no such file exists


def _origin(function):
    """The file a hook function's code came from; "" when there is none (made at run time)."""
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    path = getattr(code, "co_filename", "") or ""
    if path not in _ORIGINS:
        _ORIGINS[path] = os.path.realpath(path) if path and os.path.isfile(path) else ""
    return _ORIGINS[path]


def _check_plugins(manager):
    announced = {id(plugin) for plugin in _announced}
    for plugin in manager.get_plugins():
        if plugin is not None and id(plugin) not in announced:  # None: a name blocked (`-p no:...`)
            name = manager.get_name(plugin) or repr(plugin)
            _state["plugins_unannounced"].append("%s (%s)" % (name, type(plugin).__name__))
    for hook_name in dir(manager.hook):
        caller = getattr(manager.hook, hook_name, None)
        for impl in getattr(caller, "get_hookimpls", lambda: [])():
            key = "%s of %s (%s)" % (hook_name, impl.plugin_name, type(impl.plugin).__name__)
            _state["hook_origins"][key] = _origin(impl.function)


def _kill_strays():
    """SIGKILL every process of this user that is neither this process nor one of its ancestors
    (inside a sandbox, as its unprivileged user only: see KILL_STRAYS)."""
    if not KILL_STRAYS:
        return
    keep, pid = set(), os.getpid()
    while pid > 1 and pid not in keep:
        keep.add(pid)
        try:
            with open("/proc/%d/stat" % pid) as handle:
                pid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    uid = os.getuid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in keep:
            continue
        try:
            if os.stat("/proc/" + entry).st_uid == uid:
                os.kill(int(entry), 9)
        except OSError:
            pass


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
    _runner_before_conftests = _compare_runner(_RUNNER_AT_LOAD, at_start=True)


def pytest_configure(config):
    inipath = getattr(config, "inipath", None) or getattr(config, "inifile", None)
    if inipath:
        _state["inifile"] = {"file": os.path.realpath(str(inipath)), "sha256": _sha256(str(inipath))}
    _check_critical("start")
    _config.append(config)


def pytest_collectreport(report):
    if report.failed:
        _state["collect_errors"].append(report.nodeid)


def pytest_runtest_logreport(report):
    if report.when == "call":
        status = "passed" if report.passed else ("skipped" if report.skipped else "failed")
    elif report.failed:
        status = "error"
    elif report.skipped:
        status = "skipped"
    else:
        status = "passed"
    previous = _state["outcomes"].get(report.nodeid)
    if previous is None or RANK[status] > RANK[previous]:
        _state["outcomes"][report.nodeid] = status


def pytest_sessionfinish(session, exitstatus):
    _check_critical("end")
    _state["finished"] = True


def pytest_unconfigure(config):
    _check_critical("end")
    _compare_runner(_runner_before_conftests or _RUNNER_AT_LOAD)
    _check_plugins(config.pluginmanager)
    _kill_strays()
    _write()


_RUNNER_AT_LOAD = _Snapshot()
_MODULES_AT_LOAD = frozenset(sys.modules)
_runner_before_conftests = None
