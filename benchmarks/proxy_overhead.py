"""Latency the recording model proxy adds to each model call: the same requests, made by the openai
SDK as an agent makes them, straight to evalkit's built-in server (`null` policy, so the model
itself costs next to nothing) and through the proxy in front of it, alternately, in one run.

Each attempt is a conversation that grows as an agent's does (the reply, then a tool result of
`--tool-output` bytes, per turn) for `--turns` turns, then a fresh attempt (a new channel and
trajectory). Prints the median of each side, the median of the per-call differences (the added
latency; target < 5 ms) and the same for answers streamed by the proxy (the direct side stays
non-streamed: the built-in server does not stream, and the proxy builds its stream from the
complete reply).

    python benchmarks/proxy_overhead.py [--calls 300] [--turns 30] [--tool-output 2000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import openai

from evalkit.agent.tools import TOOL_SCHEMAS
from evalkit.bridge import AttemptChannel, ModelProxy
from evalkit.models import ModelServer, NullPolicy
from evalkit.models.backoff import EndpointStates
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec
from evalkit.tasks.model import Limits
from evalkit.trajectory import TrajectoryWriter

TARGET_MS = 5.0


def timed(call) -> tuple[float, object]:
    started = time.perf_counter()
    result = call()
    return (time.perf_counter() - started) * 1000, result


def ask(client: openai.OpenAI, messages: list[dict], stream: bool) -> dict:
    if not stream:
        message = client.chat.completions.create(model="null", messages=messages, tools=TOOL_SCHEMAS).choices[0].message
        return message.model_dump(exclude_none=True)
    calls: dict[int, dict] = {}
    chunks = client.chat.completions.create(
        model="null", messages=messages, tools=TOOL_SCHEMAS, stream=True, stream_options={"include_usage": True}
    )
    for chunk in chunks:
        for choice in chunk.choices:
            for delta in choice.delta.tool_calls or []:
                call = calls.setdefault(delta.index, {"id": delta.id, "type": "function", "function": {}})
                call["function"]["name"] = call["function"].get("name", "") + (delta.function.name or "")
                arguments = call["function"].get("arguments", "") + (delta.function.arguments or "")
                call["function"]["arguments"] = arguments
    return {"role": "assistant", "content": "", "tool_calls": [calls[i] for i in sorted(calls)]}


def measure(args: argparse.Namespace, server: ModelServer, proxy: ModelProxy, folder: Path, stream: bool) -> dict:
    spec = ModelSpec(name="null", model="null", builtin="null", max_retries=0)
    upstream = ChatClient(spec, base_url=server.base_url, endpoints=EndpointStates())
    direct = openai.OpenAI(base_url=server.base_url, api_key="not-needed", max_retries=0)
    direct_ms, proxied_ms = [], []
    attempt = 0
    while len(proxied_ms) < args.calls:
        attempt += 1
        with TrajectoryWriter(folder / f"{'stream' if stream else 'plain'}-{attempt}.jsonl") as writer:
            channel = AttemptChannel(upstream, writer, Limits(max_turns=10_000), time.monotonic() + 3600)
            agent = openai.OpenAI(base_url=proxy.base_url, api_key=proxy.register(channel), max_retries=0)
            messages = [
                {"role": "system", "content": "You are a software engineer." * 20},
                {"role": "user", "content": "Add integer power to calc."},
            ]
            for _ in range(min(args.turns, args.calls - len(proxied_ms))):
                ms, _ = timed(lambda: ask(direct, messages, False))  # noqa: B023 (called at once)
                direct_ms.append(ms)
                ms, reply = timed(lambda: ask(agent, messages, stream))  # noqa: B023
                proxied_ms.append(ms)
                messages.append(reply)
                call_id = reply["tool_calls"][0]["id"]
                messages.append({"role": "tool", "tool_call_id": call_id, "content": "x" * args.tool_output})
            proxy.unregister(channel.token)
            agent.close()
    direct.close()
    upstream.close()
    added = [p - d for p, d in zip(proxied_ms, direct_ms, strict=True)]
    return {
        "direct": statistics.median(direct_ms),
        "proxied": statistics.median(proxied_ms),
        "added": statistics.median(added),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="model calls per side and mode")
    parser.add_argument("--turns", type=int, default=30, help="turns per attempt before a fresh one")
    parser.add_argument("--tool-output", type=int, default=2000, help="bytes of each tool result")
    args = parser.parse_args()
    with (
        ModelServer({"null": NullPolicy()}) as server,
        ModelProxy() as proxy,
        tempfile.TemporaryDirectory() as folder,
    ):
        for mode, stream in (("non-streamed", False), ("streamed", True)):
            figures = measure(args, server, proxy, Path(folder), stream)
            verdict = "within" if figures["added"] < TARGET_MS else "OVER"
            print(
                f"{mode:>13}: direct {figures['direct']:.2f} ms, through the proxy {figures['proxied']:.2f} ms "
                f"(x{figures['proxied'] / figures['direct']:.2f}); added per call (median of paired differences) "
                f"{figures['added']:.2f} ms, {verdict} the {TARGET_MS:g} ms target  [{args.calls} calls]"
            )


if __name__ == "__main__":
    main()
