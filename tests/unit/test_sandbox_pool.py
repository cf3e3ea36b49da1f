"""The sandbox pool's promises, with sandboxes that only record what is done to them: a planned
sandbox is handed over made and its shell started, once; no more than `capacity` are made ahead;
a follow-up warms when its predecessor is taken and is removed when its thread moves on; anything
that goes wrong ahead of need makes `take` say None (the caller opens its own); `close()` leaves
no sandbox made and not handed over."""

from __future__ import annotations

import threading

import pytest

from evalkit.sandbox.pool import SandboxPool
from evalkit.sandbox.protocol import ExecResult, SandboxRequest


class Recorded:
    """A sandbox that records its commands and whether it was closed."""

    def __init__(self, request: SandboxRequest, works: bool = True) -> None:
        self.request, self.works = request, works
        self.commands: list[str] = []
        self.closed = False

    def exec(self, cmd: str, timeout: float | None = None) -> ExecResult:
        self.commands.append(cmd)
        return ExecResult(0 if self.works else 1, "", "", 0.0)

    def close(self) -> None:
        self.closed = True


class Maker:
    """`make` for the pool: every sandbox it made; `raising` keys fail to be made, `silent` ones run no command."""

    def __init__(self, raising: set[tuple] = frozenset(), silent: set[tuple] = frozenset()) -> None:
        self.made: list[Recorded] = []
        self.raising, self.silent = raising, silent
        self.lock = threading.Lock()

    def __call__(self, request: SandboxRequest) -> Recorded:
        if request.key in self.raising:
            raise RuntimeError("engine said no")
        sandbox = Recorded(request, works=request.key not in self.silent)
        with self.lock:
            self.made.append(sandbox)
        return sandbox


@pytest.fixture
def tasks(demo_suite):
    return demo_suite.tasks[:4]


def attempt(task) -> SandboxRequest:
    return SandboxRequest(task, "agent", then=SandboxRequest(task, "score"))


def take(pool: SandboxPool, task, role: str = "agent"):
    return pool.take(SandboxRequest(task, role))


def test_a_planned_sandbox_is_handed_over_with_its_shell_started_and_only_once(tasks):
    make = Maker()
    pool = SandboxPool(make, capacity=2, generation=lambda: 0)
    pool.plan([SandboxRequest(tasks[0], "agent"), SandboxRequest(tasks[1], "agent")])
    first = take(pool, tasks[0])
    assert first is not None and first.request.key == (tasks[0].id, "agent", "none", None)
    assert first.commands == [":"] and not first.closed
    assert take(pool, tasks[0]) is None  # planned once, handed over once: the caller opens the next
    closed = pool.close()
    never_asked = [s for s in make.made if s is not first]  # tasks[1]'s, if its warm-up had begun
    assert all(s.closed for s in never_asked) and closed == len(never_asked) == pool.counts.unused
    assert (pool.counts.handed, pool.counts.missed) == (1, 1) and not first.closed


def test_no_more_than_capacity_are_made_ahead_and_close_removes_them(tasks):
    make, two_made = Maker(), threading.Event()

    def make_and_count(request: SandboxRequest) -> Recorded:
        made = make(request)
        if len(make.made) == 2:
            two_made.set()
        return made

    pool = SandboxPool(make_and_count, capacity=2, generation=lambda: 0)
    pool.plan([SandboxRequest(t, "agent") for t in tasks])
    assert two_made.wait(30)
    assert pool.close() == 2  # waits for the warm-ups under way; the other two never start
    assert len(make.made) == 2 and all(s.closed for s in make.made)


def test_an_attempts_scoring_sandbox_warms_once_its_agent_sandbox_is_taken(tasks):
    make = Maker()
    pool = SandboxPool(make, capacity=2, generation=lambda: 0)
    pool.plan([attempt(t) for t in tasks[:2]])
    agent = take(pool, tasks[0])
    agent.close()
    score = take(pool, tasks[0], "score")
    assert score is not None and score.request.key == (tasks[0].id, "score", "none", None) and score.commands == [":"]
    assert take(pool, tasks[1]) is not None
    pool.close()
    assert pool.counts.missed == 0 and pool.counts.handed == 3


def test_a_scoring_sandbox_never_asked_for_is_removed_when_its_thread_moves_on(tasks):
    make, scoring_made = Maker(), threading.Event()

    def make_and_tell(request: SandboxRequest) -> Recorded:
        made = make(request)
        if request.role == "score":
            scoring_made.set()
        return made

    pool = SandboxPool(make_and_tell, capacity=3, generation=lambda: 0)
    pool.plan([attempt(t) for t in tasks[:2]])
    take(pool, tasks[0])  # the attempt then fails without scoring
    assert scoring_made.wait(30)
    second = take(pool, tasks[1])
    assert second is not None and second.request.task is tasks[1]
    assert take(pool, tasks[0], "score") is None  # no longer expected from this thread
    pool.close()
    (unused,) = [s for s in make.made if s.request.key == (tasks[0].id, "score", "none", None)]
    assert unused.closed


def test_a_follow_up_belongs_to_the_thread_that_took_its_predecessor(tasks):
    make = Maker()
    pool = SandboxPool(make, capacity=2, generation=lambda: 0)
    pool.plan([attempt(tasks[0])])
    take(pool, tasks[0])
    elsewhere: list = []
    other = threading.Thread(target=lambda: elsewhere.append(take(pool, tasks[0], "score")))
    other.start()
    other.join()
    assert elsewhere == [None]
    assert take(pool, tasks[0], "score") is not None
    pool.close()


@pytest.mark.parametrize("broken", ["raising", "silent"])
def test_a_failed_warm_up_leaves_the_caller_to_open_its_own(tasks, broken):
    key = (tasks[0].id, "agent", "none", None)
    make = Maker(**{broken: {key}})
    pool = SandboxPool(make, capacity=2, generation=lambda: 0)
    pool.plan([SandboxRequest(tasks[0], "agent"), SandboxRequest(tasks[1], "agent")])
    assert take(pool, tasks[0]) is None
    assert take(pool, tasks[1]) is not None
    pool.close()
    assert pool.counts.failed == 1 and all(s.closed for s in make.made if s.request.key == key)


def test_sandboxes_made_before_an_engine_restart_are_removed_not_handed_over(tasks):
    make, restarts, making = Maker(), [0], threading.Event()

    def make_then_tell(request: SandboxRequest) -> Recorded:
        making.set()
        return make(request)

    pool = SandboxPool(make_then_tell, capacity=1, generation=lambda: restarts[0])
    pool.plan([SandboxRequest(tasks[0], "agent")])
    assert making.wait(30)
    restarts[0] = 1  # the engine restarted while (or after) the sandbox was made
    assert take(pool, tasks[0]) is None
    pool.close()
    assert len(make.made) == 1 and make.made[0].closed


def test_after_close_nothing_is_made_and_removals_run_at_once(tasks):
    make = Maker()
    pool = SandboxPool(make, capacity=2, generation=lambda: 0)
    pool.close()
    pool.plan([SandboxRequest(tasks[0], "agent")])
    assert take(pool, tasks[0]) is None and make.made == []
    ran: list[str] = []
    pool.later(lambda: ran.append("removed"))
    assert ran == ["removed"]


def test_a_sandbox_made_with_an_agent_layer_is_never_handed_to_a_plain_open(tasks):
    """The agent's sandbox of an installed agent has the agent's files in its image; the scoring
    sandbox of the same task must get the plain task image."""
    make = Maker()
    pool = SandboxPool(make, capacity=2, generation=lambda: 0)
    pool.plan([SandboxRequest(tasks[0], "agent", layer="mini-swe-agent")])
    assert pool.take(SandboxRequest(tasks[0], "agent")) is None
    layered = pool.take(SandboxRequest(tasks[0], "agent", layer="mini-swe-agent"))
    assert layered is not None and layered.request.layer == "mini-swe-agent"
