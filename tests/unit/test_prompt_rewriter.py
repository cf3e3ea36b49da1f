"""`--rewriter MODEL`: a real endpoint rewrites the draft intent, given the commit, the draft and the
interface, which stays appended; when it fails, the draft stays and the reason is kept."""

from hostile_server import HostileServer, turn
from recording_server import COMPLETION, RecordingServer
from stock_repo import build_stock_repo

from evalkit.diffs import DEFAULT_TEST_GLOBS
from evalkit.gather.history import commits, split_commit
from evalkit.gather.prompts import rewrite_prompt
from evalkit.gather.task_prompt import task_prompt
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec

MESSAGE = "Add discount codes to the cart (#12)\n\nPercent or fixed codes, some with a minimum total."


def client(server, scenario):
    spec = ModelSpec(name="writer", model="w", base_url=server.url(scenario), max_retries=0, request_timeout_s=2)
    return ChatClient(spec)


def test_rewrite_uses_the_models_text_capped():
    answer = turn(content='"Let shoppers use discount codes at checkout — percentage or fixed, some with a minimum."')
    with HostileServer({"ok": [[answer]], "down": [[{"status": 503}]]}) as server:
        prompt, error = rewrite_prompt(client(server, "ok"), MESSAGE, "draft", max_chars=60)
        assert error is None and prompt.startswith("Let shoppers use discount codes") and len(prompt) <= 60
        prompt, error = rewrite_prompt(client(server, "down"), MESSAGE, "draft", max_chars=400)
        assert prompt == "draft" and "rewriter failed" in error


def test_the_rewriter_gets_the_draft_and_interface_and_the_interface_stays(tmp_path):
    choice = {**COMPLETION["choices"][0], "message": {"role": "assistant", "content": "Let checkouts hold stock."}}
    with RecordingServer({"ok": [{"body": {**COMPLETION, "choices": [choice]}}]}) as server:
        repo = build_stock_repo(tmp_path / "stock")
        commit = commits(repo)[0]
        parts = split_commit(repo, commit, DEFAULT_TEST_GLOBS)
        made = task_prompt(repo, commit.parent, commit.sha, commit.message, parts, rewriter=client(server, "ok"))
        (body,) = server.bodies("ok")
    asked = body["messages"][1]["content"]
    assert "Hold stock during checkout" in asked and "Draft request:\nHold stock during checkout." in asked
    assert "`def Stock.reserve(self, sku, n, *, hold_minutes=15)`" in asked
    assert made.prompt.startswith("Let checkouts hold stock.\n\nInterface (new in this change):")
    assert made.metadata["prompt_source"] == "rewriter writer" and made.underspecified == ["last_hold"]
