"""The Docker engine watch: attempts wait while the engine does not answer, go on when it is back,
give up past the bound, and only one thread asks the engine. The engine here is a scripted ping
(the real one is stopped and restarted in tests/integration/test_engine_restart.py)."""

from __future__ import annotations

import threading
import time

import docker.errors
import pytest
import requests
import urllib3

from evalkit.errors import SandboxError
from evalkit.sandbox.docker.engine_errors import docker_engine_unreachable, docker_unreachable
from evalkit.sandbox.engine_watch import EngineUnavailable, EngineWatch, engine_error_reason


class ScriptedEngine:
    """A ping that answers while `up`, and counts how many callers ping at once."""

    def __init__(self) -> None:
        self.up = True
        self.pings = 0
        self.at_once = 0
        self.most_at_once = 0
        self._lock = threading.Lock()

    def ping(self) -> bool:
        with self._lock:
            self.pings += 1
            self.at_once += 1
            self.most_at_once = max(self.most_at_once, self.at_once)
        try:
            time.sleep(0.002)
            if not self.up:
                raise requests.exceptions.ConnectionError(
                    urllib3.exceptions.ProtocolError("Connection aborted.", FileNotFoundError(2, "No such file"))
                )
            return True
        finally:
            with self._lock:
                self.at_once -= 1


def fast_watch(engine: ScriptedEngine, max_wait_s: float = 30.0) -> tuple[EngineWatch, list[str]]:
    watch = EngineWatch(engine.ping, max_wait_s, unreachable=docker_unreachable, heartbeat_s=0.02, backoff_cap_s=0.02)
    events: list[str] = []
    watch.subscribe(lambda event: events.append(event.kind))
    return watch, events


def api_error(status: int) -> docker.errors.APIError:
    response = requests.Response()
    response.status_code = status
    return docker.errors.APIError("engine said no", response=response, explanation="x")


def waiters(watch: EngineWatch, count: int) -> tuple[list[threading.Thread], list[BaseException | None]]:
    outcomes: list[BaseException | None] = []

    def attempt() -> None:
        try:
            watch.ready()
            outcomes.append(None)
        except EngineUnavailable as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=attempt) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads, outcomes


def test_an_unreachable_engine_is_told_from_a_failure_about_one_container():
    refused = requests.exceptions.ConnectionError("Connection refused")
    assert docker_engine_unreachable(refused)
    assert docker_engine_unreachable(requests.exceptions.ReadTimeout())
    assert docker_engine_unreachable(docker.errors.DockerException("Error while fetching server API version"))
    assert docker_engine_unreachable(api_error(500)) and docker_engine_unreachable(api_error(503))
    try:
        try:
            raise refused
        except requests.exceptions.ConnectionError as exc:
            raise SandboxError("the Docker engine stopped answering") from exc
    except SandboxError as wrapped:
        assert docker_engine_unreachable(wrapped)
    assert not docker_engine_unreachable(api_error(404))
    assert not docker_engine_unreachable(api_error(409))
    assert not docker_engine_unreachable(docker.errors.ImageNotFound("no such image"))
    assert not docker_engine_unreachable(docker.errors.BuildError("RUN failed", build_log=[]))
    assert not docker_engine_unreachable(SandboxError("git diff failed in the sandbox"))
    assert not docker_engine_unreachable(ValueError("bad"))


def test_the_reason_names_what_the_system_said_not_requests_nesting():
    cut = requests.exceptions.ConnectionError(
        urllib3.exceptions.ProtocolError("Connection aborted.", FileNotFoundError(2, "No such file or directory"))
    )
    assert engine_error_reason(cut) == "ConnectionError: No such file or directory"
    assert engine_error_reason(ValueError("")) == "ValueError"


def test_attempts_wait_while_the_engine_is_down_and_go_on_when_it_is_back():
    engine = ScriptedEngine()
    watch, events = fast_watch(engine)
    with watch.watching():
        watch.ready()  # up: returns at once
        engine.up = False
        threads, outcomes = waiters(watch, 3)
        time.sleep(0.3)
        assert outcomes == [] and watch.down_for() is not None
        engine.up = True
        for thread in threads:
            thread.join(timeout=5)
    assert outcomes == [None, None, None]
    assert events == ["down", "up"] and watch.outages == 1
    assert engine.most_at_once == 1  # three attempts waiting, one thread asking


def test_past_the_bound_every_waiting_attempt_gives_up_with_how_long_it_waited():
    engine = ScriptedEngine()
    watch, events = fast_watch(engine, max_wait_s=0.2)
    engine.up = False
    with watch.watching():
        threads, outcomes = waiters(watch, 2)
        for thread in threads:
            thread.join(timeout=5)
        with pytest.raises(EngineUnavailable, match="did not answer for 0 s"):
            watch.ready()  # and so does every later attempt
    assert len(outcomes) == 2 and all(isinstance(o, EngineUnavailable) for o in outcomes)
    assert events == ["down", "gone"]


def test_stopping_the_watch_releases_attempts_waiting_for_the_engine():
    engine = ScriptedEngine()
    watch, _ = fast_watch(engine)
    engine.up = False
    with watch.watching():
        threads, outcomes = waiters(watch, 1)
        time.sleep(0.1)
        assert outcomes == []
        started = time.monotonic()
        watch.stop()  # what Ctrl-C does through the backend
        threads[0].join(timeout=5)
    assert time.monotonic() - started < 2
    assert isinstance(outcomes[0], EngineUnavailable)


def test_an_attempt_counts_as_lost_with_the_engine_only_when_the_engine_went_away():
    engine = ScriptedEngine()
    watch, _ = fast_watch(engine)
    with watch.watching():
        before = watch.outages
        assert not watch.lost_since(before)  # a sandbox_error while the engine answers: the attempt's own
        assert not watch.lost_since(before, api_error(409))  # a container's error while it answers: the same
        assert not watch.lost_since(before, ValueError("a bug"))
        engine.up = False
        assert watch.lost_since(before, requests.exceptions.ConnectionError("refused"))  # at once, no ping
        assert not watch.answers()
        engine.up = True
        watch.ready()
        assert watch.lost_since(before)  # an outage happened during the attempt, though the engine is back
        assert not watch.lost_since(watch.outages)


def test_a_containers_error_before_any_ping_failed_counts_as_lost_when_the_engine_does_not_answer_now():
    """dockerd shutting down closes its listener, then kills its containers while still answering on
    the connections it has: an attempt fails with a 409 about its own container ("is not running")
    before the watch's next ping (CI, stop 38). A fresh ping is the evidence, whatever the error."""
    engine = ScriptedEngine()
    watch = EngineWatch(engine.ping, unreachable=docker_unreachable, heartbeat_s=3600)  # no ping between
    with watch.watching():
        watch.ready()
        before = watch.outages
        engine.up = False  # the listener closed; the watch has not pinged since
        assert watch.outages == before
        assert watch.lost_since(before, api_error(409))
        assert watch.lost_since(before, SandboxError("sandbox container 3eacd63fec8f is gone"))
        engine.up = True
        assert watch.lost_since(before)  # the outage the fresh pings saw still counts once it is back
        assert not watch.lost_since(watch.outages, api_error(409))


def test_an_engine_with_no_check_calls_no_error_its_own():
    watch = EngineWatch(lambda: True)
    assert not watch.unreachable(requests.exceptions.ConnectionError("refused"))
    assert not watch.lost_since(watch.outages, requests.exceptions.ConnectionError("refused"))


def test_without_a_watching_thread_a_question_pings_directly():
    engine = ScriptedEngine()
    watch, events = fast_watch(engine)
    assert watch.answers() and engine.pings == 1
    engine.up = False
    assert not watch.answers() and events == ["down"]


def test_the_run_display_shows_the_wait_live_and_without_a_terminal_a_line_down_and_one_back():
    import io

    from rich.console import Console

    from evalkit.runs.display import RunDisplay

    engine = ScriptedEngine()
    watch, _ = fast_watch(engine)
    piped = io.StringIO()
    display = RunDisplay(Console(file=piped, force_terminal=False, width=200), 4, ["m"], engine=watch)
    live = Console(width=200, record=True, force_terminal=False)
    live.print(display.__rich__())
    assert "Docker engine" not in live.export_text()

    engine.up = False
    assert not watch.answers()
    live.print(display.__rich__())
    assert "Docker engine unavailable, waiting… 0 s (up to 30 s)" in live.export_text()
    engine.up = True
    assert watch.answers()
    lines = piped.getvalue().splitlines()
    assert lines == [
        "Docker engine unavailable (ConnectionError: No such file); attempts paused, waiting up to 30 s",
        "Docker engine back after 0 s; attempts resume",
    ]
