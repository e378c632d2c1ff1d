"""CPU and time of memlet's one-off outbound calls: a provider's model list and a run's completion callback, each
against the mock LLM in another process (the callback posts to a route that answers 405: its status is recorded).

    .venv/bin/python bench/bench_outbound_calls.py [--calls 200] [--root DIR]

Prints this process's CPU per call and the wall time per call. Every call opens its own connection under the
outbound policy, as the server's do. `--root` imports memlet from another checkout (e.g. a worktree of an older
commit) to compare.
"""

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import checkout

ARGS = checkout.parser(__doc__, calls=200).parse_args()
checkout.use_root(ARGS)

from bench.harness import mock_llm_process  # noqa: E402
from memlet.net.outbound import OutboundPolicy, parse_allowed_hosts  # noqa: E402
from memlet.providers.remote import ProviderSource, fetch_models  # noqa: E402
from memlet.runs.callbacks import post_callback  # noqa: E402

PAYLOAD = {"run_id": "run-1", "status": "completed", "completed_at": "2026-11-28T00:00:00", "metadata": {}}


async def measure(mock_url: str) -> None:
    policy = OutboundPolicy(parse_allowed_hosts(mock_url.split("/")[2]))  # 127.0.0.1:<port>
    source = ProviderSource("mine", "openai", "byok", mock_url, "sk-mock")

    async def listing() -> None:
        lists = await fetch_models(source, timeout_s=5, policy=policy)
        assert lists.llm, "the mock listed no models"

    async def callback() -> None:
        outcome = await post_callback(f"{mock_url}/models", PAYLOAD, run_id="run-1", policy=policy)
        assert outcome.status_code == 405, outcome

    name = ARGS.root.resolve().name
    for label, call in (("model list", listing), ("callback", callback)):
        cpu_us, wall_ms = await checkout.per_call(call, ARGS.calls)
        print(f"{name}: {label:10s} {cpu_us:8.0f} us client CPU, {wall_ms:6.2f} ms wall per call", flush=True)


def main() -> None:
    with mock_llm_process() as (mock_url, _):
        asyncio.run(measure(mock_url))


if __name__ == "__main__":
    main()
