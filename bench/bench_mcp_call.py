"""CPU and time of one MCP tool call (connect, initialize, `tools/call`, close, as memlet makes every MCP operation)
against the tests' demo MCP server over streamable HTTP, in another process.

    .venv/bin/python bench/bench_mcp_call.py [--calls 100] [--root DIR]

Prints this process's CPU per call and the wall time per call, after a few warm-up calls (the first imports the
`mcp` SDK). `--root` imports memlet from another checkout (e.g. a worktree of an older commit) to compare.
"""

import asyncio
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench import checkout

ARGS = checkout.parser(__doc__, calls=100).parse_args()
checkout.use_root(ARGS)

from bench.harness import stop, wait_port  # noqa: E402
from memlet.mcp.client import Limits, ServerSpec, call_tool  # noqa: E402
from memlet.net.outbound import OutboundPolicy, parse_allowed_hosts  # noqa: E402
from tests.conftest import free_port  # noqa: E402

DEMO = checkout.ROOT / "tests" / "mcp_servers" / "demo_server.py"


async def measure(url: str, port: int) -> None:
    spec = ServerSpec(server_type="streamable_http", name="demo", server_url=url)
    limits = Limits(
        connect_timeout_s=10, call_timeout_s=10, policy=OutboundPolicy(parse_allowed_hosts(f"127.0.0.1:{port}"))
    )

    async def call() -> None:
        result = await call_tool(spec, limits, "echo", {"message": "hi"})
        assert result.success and result.text == "Echo: hi", result

    cpu_us, wall_ms = await checkout.per_call(call, ARGS.calls)
    print(f"{ARGS.root.resolve().name}: MCP tool call {cpu_us:8.0f} us client CPU, {wall_ms:6.2f} ms wall per call")


def main() -> None:
    port = free_port()
    demo = subprocess.Popen(
        [sys.executable, str(DEMO), "streamable-http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_port(port, demo)
        asyncio.run(measure(f"http://127.0.0.1:{port}/mcp", port))
    finally:
        stop(demo)


if __name__ == "__main__":
    main()
