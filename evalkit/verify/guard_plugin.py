"""evalkit's guard: a pytest plugin loaded (with `-p`, under a random module name) into the hidden
test run inside the scoring sandbox. Never imported by evalkit itself: its source is written into
the sandbox, like the command server's. Standard library and pytest (>= 7) only.

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
A missing report means the run never reached the end through this plugin (pytest replaced,
the plugin unregistered, the process killed). The report is written once, last, in
pytest_unconfigure, after every other process of the same user that is not an ancestor of this
one has been killed: a daemon the code under test left behind cannot rewrite it afterwards, and a
JUnit file it rewrote before then disagrees with the report. That kill happens only where the
sandbox says it may (EVALKIT_SANDBOX=1 in the container's environment, read when the plugin loads,
before any code under test) and never as root: run on a host, above all as root, it would SIGKILL
every other process of the machine, the Docker engine included.
"""

import hashlib
import json
import os
import sys

REPORT = os.environ.get("EVALKIT_GUARD_REPORT", "")
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
}


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
    path = getattr(plugin, "__file__", None)
    name = manager.get_name(plugin) or getattr(plugin, "__name__", repr(plugin))
    if path and name not in _state["plugins"]:
        _state["plugins"][name] = {"file": os.path.realpath(path), "sha256": _sha256(path)}


def pytest_configure(config):
    inipath = getattr(config, "inipath", None) or getattr(config, "inifile", None)
    if inipath:
        _state["inifile"] = {"file": os.path.realpath(str(inipath)), "sha256": _sha256(str(inipath))}
    _check_critical("start")


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
    _kill_strays()
    _write()
