"""`--rewriter MODEL`: a real endpoint rewrites the draft prompt; when it fails, the draft stays
and the reason is kept."""

from hostile_server import HostileServer, turn

from evalkit.gather.prompts import rewrite_prompt
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
