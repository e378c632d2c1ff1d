"""CPU of the LLM call alone: `OpenAICompatibleClient` against the mock LLM in another process, per call.

    .venv/bin/python bench/bench_llm_call.py [--calls 300] [--messages 60] [--root DIR]

Measures this process's CPU time (the client's, not the mock's) per streamed and per non-streamed chat call, for a
request the size of a warm agent's (`--messages` in-context messages, eight tools, a reply of a few dozen chunks).
`--root` imports memlet from another checkout, e.g. `--root /work/main` to compare with the code there.
"""

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import checkout

PARSER = checkout.parser(__doc__, calls=300)
PARSER.add_argument("--messages", type=int, default=60)
ARGS = PARSER.parse_args()
checkout.use_root(ARGS)

from bench.harness import mock_llm_process  # noqa: E402
from memlet.llm.client import ChatRequest, OpenAICompatibleClient, RetryPolicy  # noqa: E402
from tests.mock_llm import Reply, script_remote  # noqa: E402

REPLY = Reply.text(" ".join(f"word{i}" for i in range(60)))


def tools() -> list[dict[str, object]]:
    properties = {"query": {"type": "string", "description": "What to look for."}, "limit": {"type": "integer"}}
    return [
        {
            "type": "function",
            "function": {
                "name": f"tool_{i}",
                "description": "A tool with a short description. " * 4,
                "parameters": {"type": "object", "properties": properties, "required": ["query"]},
            },
        }
        for i in range(8)
    ]


def request(messages: int, *, stream: bool) -> ChatRequest:
    body = [{"role": "system", "content": "You are a helpful assistant. " * 200}]
    for i in range(messages):
        body.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"message number {i} " * 20})
    return ChatRequest(model="gpt-4o-mini", messages=body, tools=tools(), tool_choice="auto", stream=stream)


async def cpu_per_call(client: OpenAICompatibleClient, mock_url: str, req: ChatRequest, calls: int) -> float:
    """Microseconds of this process's CPU per call (the mock's scripting happens outside the measured span)."""
    spent = 0.0
    batch = 50
    for start in range(0, calls, batch):
        n = min(batch, calls - start)
        script_remote(mock_url, *([REPLY] * n))
        began = time.process_time()
        for _ in range(n):
            await client.chat(req)
        spent += time.process_time() - began
    return spent / calls * 1e6


async def measure(mock_url: str) -> None:
    client = OpenAICompatibleClient(base_url=mock_url, api_key="sk-mock", retry=RetryPolicy(max_retries=0))
    streamed, whole = request(ARGS.messages, stream=True), request(ARGS.messages, stream=False)
    await cpu_per_call(client, mock_url, streamed, 30)  # warm-up
    for label, req in (("streamed", streamed), ("non-streamed", whole)):
        per_call = await cpu_per_call(client, mock_url, req, ARGS.calls)
        print(f"{ARGS.root.resolve().name}: {label} chat call: {per_call:7.0f} us client CPU per call", flush=True)
    await client.aclose()


def main() -> None:
    with mock_llm_process() as (mock_url, _):
        asyncio.run(measure(mock_url))


if __name__ == "__main__":
    main()
