"""What every sandbox backend promises, checked through the protocols of evalkit/sandbox/protocol.py
only, for each backend of the table: a new row in `evalkit.sandbox.backend_table.BACKENDS` runs
this suite with no other change. The core (connect, open, workspace, close, and the `Sandbox` it
opens) is tested on every backend; a capability's tests on the backends that have it, each skip
saying which capability is missing. The driver's workspace-only backend (no engine, no sandbox:
the nodes of a cluster run open them) is tested beside the table's for the core it supports.
One backend and one sandbox are shared per backend where a test leaves nothing another relies on;
the others open a fresh sandbox."""

from __future__ import annotations

import hashlib
import io
import os
import secrets
import tarfile

import pytest

from evalkit.errors import SandboxError
from evalkit.sandbox.backend_table import BACKENDS, open_backend
from evalkit.sandbox.protocol import ListsLeftovers, PreparesAhead, SandboxBackend, SandboxRequest
from evalkit.sandbox.workspace import build_workspace, tar_single_file
from evalkit.sandbox.workspace_backend import WorkspaceBackend

pytestmark = pytest.mark.integration

# backends no `--backend` names, and that open no sandbox (`open` is one SandboxError saying why)
WORKSPACE_ONLY = {"workspace-only": WorkspaceBackend}
EVERY_BACKEND = sorted(BACKENDS) + sorted(WORKSPACE_ONLY)


def _connected(name: str):
    """Backend `name` with a run of its own; closed at the end, and then nothing of its run is left."""
    run_id = f"pytest-conformance-{secrets.token_hex(3)}"
    try:
        if name in WORKSPACE_ONLY:
            opened = WORKSPACE_ONLY[name].connect(run_id, lambda line: None)
        else:
            opened = open_backend(name, run_id)
    except SandboxError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the {name} backend: {exc}")
        pytest.skip(f"{name} backend unavailable: {exc}")
    opened.conformance_name = name  # which parameter it is, for the skips below
    yield opened
    opened.close()
    if isinstance(opened, ListsLeftovers):
        assert len(opened.live) == 0 and opened.remaining() == [], f"{name} left sandboxes behind"


def needs(backend: SandboxBackend, capability: type) -> None:
    """Skip, saying so, when `backend` lacks `capability`."""
    if not isinstance(backend, capability):
        pytest.skip(f"{backend.conformance_name} has no {capability.__name__}")


def opens_sandboxes(backend: SandboxBackend) -> None:
    """Skip, saying so, on a workspace-only backend."""
    if backend.conformance_name in WORKSPACE_ONLY:
        pytest.skip(f"{backend.conformance_name} opens no sandboxes (the nodes of a cluster run do)")


@pytest.fixture(scope="module", params=EVERY_BACKEND)
def backend(request):
    """The backend named by the parameter, for this module."""
    yield from _connected(request.param)


@pytest.fixture
def prepared(backend):
    """Another backend of the same name, of its own for one test: to be told what comes
    (`prepare`) or closed early."""
    yield from _connected(backend.conformance_name)


def test_connect_gives_the_core_for_the_run(backend):
    assert isinstance(backend, SandboxBackend)
    assert backend.run_id.startswith("pytest-conformance-")


def test_the_workspace_is_the_tasks_base_tree_built_once(backend, toy_task):
    workspace = backend.workspace(toy_task)
    assert backend.workspace(toy_task) is workspace
    assert workspace.base_commit == build_workspace(toy_task.source).base_commit


def test_closing_is_a_count_and_safe_twice(prepared):
    assert isinstance(prepared.close(), int)
    assert prepared.close() == 0


def test_a_workspace_only_backend_refuses_to_open_in_one_line(backend, toy_task):
    if backend.conformance_name not in WORKSPACE_ONLY:
        pytest.skip(f"{backend.conformance_name} opens sandboxes")
    with pytest.raises(SandboxError) as refused:
        backend.open(toy_task, role="agent")
    assert "\n" not in str(refused.value) and "the nodes make sandboxes" in str(refused.value)


@pytest.fixture(scope="module")
def box(backend, toy_task):
    opens_sandboxes(backend)
    sandbox = backend.open(toy_task, role="agent")
    yield sandbox
    sandbox.close()


def test_commands_report_their_output_and_exit_code(box):
    result = box.exec("echo out; echo err >&2; (exit 3)")
    assert (result.exit_code, result.stdout, result.stderr, result.ok) == (3, "out\n", "err\n", False)
    assert not result.truncated and not result.timed_out
    here = box.exec("pwd")
    assert here.ok and here.stdout.strip() == box.workdir
    assert box.exec("ls", cwd=f"{box.workdir}/calc").stdout.split() == ["__init__.py"]
    assert box.exec("pwd", cwd=box.workdir).stdout.strip() == box.workdir


def test_a_command_over_its_timeout_is_killed_with_what_it_started(box):
    result = box.exec("sleep 100 & sleep 100; echo finished", timeout=1)
    assert result.timed_out and result.exit_code == 124 and "finished" not in result.stdout
    assert box.exec("pgrep -u $(id -u) -x sleep || echo none").stdout.strip() == "none"
    assert box.exec("echo alive").stdout == "alive\n"


def test_output_over_the_limit_keeps_head_and_tail(box):
    result = box.exec("printf head; head -c 1000000 /dev/zero | tr '\\0' x; printf tail", output_limit=10_000)
    assert result.truncated and result.exit_code == 0
    assert result.stdout.startswith("headxxx") and result.stdout.endswith("xxxtail")
    assert len(result.stdout) < 10_000 + 200
    assert not box.exec("echo small", output_limit=10_000).truncated


def test_files_written_read_back_and_missing_ones_raise(box):
    box.write_file("notes/deep/new.txt", "héllo\n")
    box.write_file("/tmp/raw.bin", b"\x00\x01bytes")
    assert box.read_file("notes/deep/new.txt") == "héllo\n"
    assert box.exec("od -An -c /tmp/raw.bin").stdout.split() == ["\\0", "001", "b", "y", "t", "e", "s"]
    with pytest.raises(FileNotFoundError):
        box.read_file("no/such/file.txt")


def test_archives_copied_in_and_out(box):
    box.exec("mkdir -p incoming")
    box.copy_in(tar_single_file("a.txt", b"from the host\n"), "incoming")
    assert box.read_file("incoming/a.txt") == "from the host\n"
    with tarfile.open(fileobj=io.BytesIO(box.copy_out("incoming/a.txt"))) as tar:
        member = tar.next()
        assert member is not None and member.name == "a.txt"
        assert tar.extractfile(member).read() == b"from the host\n"


def test_kill_all_ends_every_process_and_the_sandbox_goes_on(box):
    sleepers = "pgrep -u $(id -u) -f '^sleep 30[01]$'"
    box.exec("sleep 300 >/dev/null 2>&1 & sleep 301 >/dev/null 2>&1 &")
    started = f"for _ in $(seq 50); do [ $({sleepers} | wc -l) = 2 ] && break; sleep 0.1; done; {sleepers} | wc -l"
    assert box.exec(started).stdout.strip() == "2"
    box.kill_all()
    assert box.exec(f"{sleepers} || echo none", timeout=20).stdout.strip() == "none"
    assert box.exec("pwd").stdout.strip() == box.workdir


def test_the_sandbox_has_no_network(box):
    result = box.exec(
        "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=3)\"; ls /sys/class/net"
    )
    assert result.exit_code == 0  # the listing ran
    assert "Network is unreachable" in result.stderr
    assert result.stdout.split() == ["lo"]


def test_without_network_localhost_still_resolves_and_serves(box):
    # tests that start a server on localhost (sphinx's linkcheck) must run in a network-less sandbox
    served = box.exec(
        "python3 -c \"import socket; s = socket.create_server(('localhost', 0));"
        " c = socket.create_connection(('localhost', s.getsockname()[1]), timeout=3); print('served')\""
    )
    assert served.stdout.strip() == "served", served.stderr


def test_a_fresh_sandbox_diffs_empty_then_shows_every_change(backend, toy_task):
    opens_sandboxes(backend)
    with backend.open(toy_task, role="agent") as fresh:
        assert fresh.diff() == ""
        fresh.write_file("calc/extra.py", "VALUE = 1\n")
        fresh.exec("sed -i 's/a + b/b + a/' calc/__init__.py && rm tests/test_calc.py")
        assert fresh.read_file("calc/extra.py") == "VALUE = 1\n"
        diff = fresh.diff()
    assert "+++ b/calc/extra.py" in diff and "+    return b + a" in diff and "deleted file mode" in diff


def test_closing_twice_is_harmless(backend, toy_task):
    opens_sandboxes(backend)
    sandbox = backend.open(toy_task, role="score")
    assert sandbox.exec("true").ok
    sandbox.close()
    sandbox.close()


def test_cd_and_exports_persist_between_commands(box):
    assert box.exec("cd calc && export EVALKIT_PROBE=kept").ok
    result = box.exec('pwd && echo "$EVALKIT_PROBE"')
    assert result.stdout.split() == [f"{box.workdir}/calc", "kept"]
    box.exec(f"cd {box.workdir} && unset EVALKIT_PROBE")


def test_closing_twice_leaves_nothing_on_the_engine(backend, toy_task):
    opens_sandboxes(backend)
    needs(backend, ListsLeftovers)
    before = set(backend.remaining())
    sandbox = backend.open(toy_task, role="score")
    opened = set(backend.remaining()) - before
    assert len(opened) == 1
    sandbox.close()
    sandbox.close()
    assert not opened & set(backend.remaining())


def test_files_written_and_read_as_the_sandbox_user(box):
    data = bytes(range(256)) * 400
    assert box.write_as_user("as_user/blob.bin", data).ok
    assert box.exec("sha256sum < as_user/blob.bin").stdout.split()[0] == hashlib.sha256(data).hexdigest()
    owner = box.exec("stat -c %u as_user/blob.bin as_user; id -u").stdout.split()
    assert owner[0] == owner[1] == owner[2] and owner[2] != "0"
    assert box.write_as_user("as_user/text.txt", "héllo\n".encode()).ok
    assert box.read_as_user("as_user/text.txt").stdout == "héllo\n"
    missing = box.read_as_user("as_user/none.txt")
    assert not missing.ok and "No such file" in missing.stderr
    denied = box.write_as_user("/etc/evalkit-denied", b"x")
    assert not denied.ok and "Permission denied" in denied.stderr


def test_a_sandbox_prepared_ahead_is_as_clean_as_a_fresh_one(prepared, backend, toy_task):
    needs(prepared, PreparesAhead)
    prepared.prepare([SandboxRequest(toy_task, "agent")] * 2, capacity=2)
    with prepared.open(toy_task, role="agent") as first:
        first.write_file("left.txt", "from the first attempt\n")
        first.exec("sed -i 's/a + b/b - a/' calc/__init__.py; export LEFT=1; (sleep 300 >/dev/null 2>&1 &)")
    with prepared.open(toy_task, role="agent") as second, backend.open(toy_task, role="agent") as fresh:
        assert second.base_commit == fresh.base_commit
        look = "git log --format=%H; git status --porcelain; echo ${LEFT:-unset}; pgrep -u $(id -u) sleep || echo none"
        assert second.exec(look).stdout == fresh.exec(look).stdout == f"{fresh.base_commit}\nunset\nnone\n"
        assert second.diff() == "" and second.read_file("calc/__init__.py") == fresh.read_file("calc/__init__.py")


def test_a_prepared_backend_leaves_nothing_once_closed(prepared, toy_task):
    needs(prepared, PreparesAhead)
    needs(prepared, ListsLeftovers)
    asked = SandboxRequest(toy_task, "agent", then=SandboxRequest(toy_task, "score"))
    prepared.prepare([asked, SandboxRequest(toy_task, "score", then=asked)] * 3, capacity=3)
    sandbox = prepared.open(toy_task, role="agent")
    sandbox.exec("true")
    sandbox.close()
    assert prepared.open(toy_task, role="score").exec("true").ok  # left open: close() removes it
    prepared.close()
    prepared.close()
    assert len(prepared.live) == 0 and prepared.remaining() == []
