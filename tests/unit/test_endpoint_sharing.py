"""Clients of one endpoint share it: never more than `max_connections` requests in flight, and a
429's Retry-After holds back every client's next request, measured on a real slow local server."""

import re
import threading
import time

import pytest
from recording_server import RecordingServer

from evalkit.models.backoff import EndpointStates
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec

USER = [{"role": "user", "content": "hi"}]


def clients(url, endpoints, n=2, **fields):
    return [
        ChatClient(ModelSpec(name=f"c{i}", model="m", base_url=url, retry_base_s=0.05, **fields), endpoints=endpoints)
        for i in range(n)
    ]


def busy(pair, requests_each=2):
    """Every client sends its requests from its own thread; returns the replies' retries."""
    results: list = []

    def work(client):
        for _ in range(requests_each):
            results.append(client.complete(USER, [], time.monotonic() + 30).retries)

    threads = [threading.Thread(target=work, args=(c,)) for c in pair]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_max_connections_holds_across_clients_of_one_endpoint():
    with RecordingServer({"slow": [{"delay": 0.3}]}) as server:
        endpoints = EndpointStates()
        pair = clients(server.url("slow"), endpoints, max_connections=1)
        seen: list[dict] = []

        def watch():
            for _ in range(20):
                seen.append(pair[1].endpoint_status())
                time.sleep(0.05)

        watcher = threading.Thread(target=watch)
        watcher.start()
        assert len(busy(pair)) == 4
        watcher.join()
        assert server.max_in_flight == 1
        assert max(s["in_flight"] for s in seen) == 1 and seen[0]["max_connections"] == 1
        # the same load without the cap does overlap, so the check above can fail
        free = clients(server.url("slow"), EndpointStates())
        busy(free)
        assert server.max_in_flight == 2
        for client in pair + free:
            client.close()


def test_different_models_or_endpoint_states_do_not_share_a_cap():
    with RecordingServer({"slow": [{"delay": 0.3}]}) as server:
        endpoints = EndpointStates()
        one = ChatClient(
            ModelSpec(name="a", model="m1", base_url=server.url("slow"), max_connections=1), endpoints=endpoints
        )
        two = ChatClient(
            ModelSpec(name="b", model="m2", base_url=server.url("slow"), max_connections=1), endpoints=endpoints
        )
        busy([one, two], requests_each=1)
        assert server.max_in_flight == 2
        one.close()
        two.close()


def test_a_429_holds_back_the_other_clients_next_request():
    limited = [{"status": 429, "headers": {"Retry-After": "1"}, "body": {"error": {"message": "slow down"}}}, {}]
    with RecordingServer({"limited": limited}) as server:
        endpoints = EndpointStates()
        first, second = clients(server.url("limited"), endpoints)
        worker = threading.Thread(target=lambda: first.complete(USER, [], time.monotonic() + 30))
        worker.start()
        waited = time.monotonic() + 5
        while second.endpoint_status()["rate_limited"] == 0 and time.monotonic() < waited:
            time.sleep(0.01)
        status = second.endpoint_status()
        assert status["rate_limited"] == 1 and 0.5 < status["waiting_until"] <= 1.0
        second.complete(USER, [], time.monotonic() + 30)
        worker.join(10)
        refused_at = server.received[0].at
        later = [r.at - refused_at for r in server.received[1:]]
        assert len(later) == 2 and min(later) >= 0.95, later  # neither client went before the second was up
        assert second.endpoint_status()["waiting_until"] == 0
        first.close()
        second.close()


def _rendered(display) -> str:
    from rich.console import Console

    console = Console(width=200, record=True, force_terminal=False)
    console.print(display.__rich__())
    return console.export_text()


def test_the_live_display_shows_requests_in_flight_waiting_and_a_429_hold_off():
    from rich.console import Console

    from evalkit.records import AttemptRecord
    from evalkit.runs.display import RunDisplay

    limited = [{"status": 429, "headers": {"Retry-After": "2"}, "body": {"error": {"message": "slow down"}}}, {}]
    with RecordingServer({"slow": [{"delay": 1.0}], "limited": limited}) as server:
        endpoints = EndpointStates()
        printed = Console(width=200, record=True, force_terminal=False)
        display = RunDisplay(printed, 2, ["c0", "c1"], endpoints)
        assert "in flight" not in _rendered(display)  # nothing yet: no endpoint line

        pair = clients(server.url("slow"), endpoints, max_connections=1)
        worker = threading.Thread(target=busy, args=(pair, 1))
        worker.start()
        ends = time.monotonic() + 5
        while pair[0].endpoint_status()["waiting"] == 0 and time.monotonic() < ends:
            time.sleep(0.01)
        text = _rendered(display)
        assert "1/1 in flight, 1 waiting" in text and server.url("slow").rstrip("/") in text
        worker.join(10)

        first, second = clients(server.url("limited"), endpoints)
        held = threading.Thread(target=lambda: first.complete(USER, [], time.monotonic() + 30))
        held.start()
        while first.endpoint_status()["rate_limited"] == 0 and time.monotonic() < ends + 5:
            time.sleep(0.01)
        text = _rendered(display)
        assert "1× rate-limited (429)" in text and re.search(r"held off [12]\.\ds", text), text
        # without a terminal, the 429 is reported once, beside the finished attempt's line
        record = AttemptRecord(run_id="r", task_id="t", model="c0", sample=0, resolved=False, stop_reason="done")
        display.add(record)
        display.add(record.model_copy(update={"sample": 1}))
        held.join(10)
        lines = printed.export_text().splitlines()
        assert sum("rate-limited (429)" in line for line in lines) == 1, lines
        for client in pair + [first, second]:
            client.close()


def test_failures_show_live_with_their_reason_and_without_a_terminal_once_per_reason_change():
    from rich.console import Console

    from evalkit.models.client import EndpointError
    from evalkit.runs.display import RunDisplay

    boom = {"status": 500, "body": {"error": {"message": "boom"}}}
    loading = {"status": 503, "body": {"error": {"message": "loading"}}}
    with RecordingServer({"down": [boom] * 6 + [loading]}) as server:
        endpoints = EndpointStates()
        printed = Console(width=200, record=True, force_terminal=False)
        (client,) = clients(server.url("down"), endpoints, n=1, max_retries=2)
        with RunDisplay(printed, 2, ["c0"], endpoints) as display:
            for _ in range(2):  # two attempts' requests, 6 failures for one reason
                with pytest.raises(EndpointError):
                    client.complete(USER, [], time.monotonic() + 30)
            status = client.endpoint_status()
            assert status["retries"] == {"server_error": 4} and status["gave_up"] == 2
            assert status["last_failure"] == "server_error (HTTP 500): boom"
            text = _rendered(display)
            assert "4 retries (server_error ×4), 2 gave up (endpoint_error); last: server_error (HTTP 500): " in text
            with pytest.raises(EndpointError):  # the server now answers 503
                client.complete(USER, [], time.monotonic() + 30)
        client.close()
    lines = [line for line in printed.export_text().splitlines() if "failing" in line]
    assert len(lines) == 2, lines  # a line when the reason changed (500 → 503), not one per failed request
    assert lines[0].startswith(f"m @ {server.url('down')}: failing, 1 retry (server_error ×1); last: server_error")
    assert "server_error (HTTP 503): loading" in lines[1]
