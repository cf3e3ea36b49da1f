"""The guard's watch of the runner itself (loaded by guard_plugin.py from its own folder; standard
library and pytest only): pytest's and unittest's functions that decide outcomes, checked to still
come from their own module's file; a snapshot of every function and class member of the runner's
modules (`_pytest`, `pytest`, `pluggy`, `unittest`, the guard) compared by identity at the end; the
registered plugins and hook functions with the file each came from; and the processes a test run
left behind. Each function takes the guard's `state` (its report) and records into it."""

import os
import sys
import types

RUNNER_PREFIXES = ("_pytest", "pytest", "pluggy", "unittest")

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


def code_file(obj):
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


def check_critical(state, moment):
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
        where = code_file(obj)
        expected = getattr(module, "__file__", None)
        if expected is None:
            continue
        # every CRITICAL name is a Python function of its module: anything else is a replacement
        if where is None or os.path.realpath(where) != os.path.realpath(expected):
            name = "%s.%s" % (module_name, dotted)
            if not any(entry.startswith(name + " ") for entry in state["tampered"]):
                state["tampered"].append("%s now comes from %s (seen at the %s)" % (name, where, moment))


def runner_modules(plugin_name):
    me = sys.modules.get(plugin_name)
    for name, module in list(sys.modules.items()):
        if module is me or name.split(".")[0] in RUNNER_PREFIXES:
            yield name, module


_MISSING = object()
_MEMBER_KINDS = (types.FunctionType, type, property, staticmethod, classmethod)
_PYTEST_DIR = os.path.dirname(os.path.realpath(sys.modules["_pytest"].__file__)) + os.sep


class Snapshot:
    """The runner's module dicts, and the dicts of the classes they define, as they were: their
    keys and values held flat in a few lists, compared at the end by identity. Held flat, not as
    a copy of each dict: a thousand copies surviving into the collector's oldest generation cost
    the test run a full collection of its own (~10 ms, a third of the guard's cost on a short
    run)."""

    def __init__(self, plugin_name):
        self.plugin_name = plugin_name
        self.names, self.holders, self.is_class, self.starts, self.keys, self.values = [], [], [], [], [], []
        for name, module in runner_modules(plugin_name):
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
        if isinstance(value, kinds) and new.get(key, _MISSING) is not value:
            yield key, "replaced" if key in new else "removed"
    for key, value in new.items():
        if key not in old and isinstance(value, _MEMBER_KINDS) and not isinstance(value, type):
            yield key, "added"


def compare_runner(state, before, modules_at_load, at_start=False):
    """What changed in the runner since `before` (a `Snapshot`), recorded; at start, the snapshot
    now (the end's baseline).
    `at_start`: the window before the first conftest, where pytest's own start-up and installed
    plugins (hypothesis wraps `FixtureFunctionMarker.__call__` when it is imported) change it:
    changes whose code is pytest's are dropped, the others kept apart with the files of the
    modules imported by then, for the harness to judge against the candidate's change."""
    for member, what, now in before.changes():
        entry = "%s %s" % (member, what)
        if not at_start or what == "removed":
            state["runner_changed"].append(entry)
        elif not _pytests_own(now):
            state["runner_changed_at_start"].append(entry)
    if at_start and state["runner_changed_at_start"]:
        state["imported_at_start"] = imported_since(modules_at_load)
    return Snapshot(before.plugin_name) if at_start else None


def imported_since(modules_at_load):
    """The real paths of the modules imported since `modules_at_load` (names)."""
    files = set()
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) if name not in modules_at_load else None
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


def check_plugins(state, announced_plugins, manager):
    announced = {id(plugin) for plugin in announced_plugins}
    for plugin in manager.get_plugins():
        if plugin is not None and id(plugin) not in announced:  # None: a name blocked (`-p no:...`)
            name = manager.get_name(plugin) or repr(plugin)
            state["plugins_unannounced"].append("%s (%s)" % (name, type(plugin).__name__))
    for hook_name in dir(manager.hook):
        caller = getattr(manager.hook, hook_name, None)
        for impl in getattr(caller, "get_hookimpls", lambda: [])():
            key = "%s of %s (%s)" % (hook_name, impl.plugin_name, type(impl.plugin).__name__)
            state["hook_origins"][key] = _origin(impl.function)


def strays():
    """The processes of this user that are neither this process nor one of its ancestors."""
    keep, pid = set(), os.getpid()
    while pid > 1 and pid not in keep:
        keep.add(pid)
        try:
            with open("/proc/%d/stat" % pid) as handle:
                pid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    uid, found = os.getuid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in keep:
            continue
        try:
            if os.stat("/proc/" + entry).st_uid == uid:
                found.append(int(entry))
        except OSError:
            pass
    return found


def kill(pids):
    for pid in pids:
        try:
            os.kill(pid, 9)
        except OSError:
            pass
