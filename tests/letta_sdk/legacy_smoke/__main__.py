"""Typical programs written for the pre-1.0 Letta Python SDK (``letta-client==0.1.324``, Fern-generated), run
unchanged against a live memlet: each step calls the old SDK as such a program does and records whether the route
answered and the old SDK's types accept the answer. Run by ``run_legacy_sdk.sh`` (see ../README.md); not part of CI.

    python tests/letta_sdk/legacy_smoke <memlet base url> <mock LLM base url> [<streamable HTTP MCP server url>]
"""

import sys

import core
import extras
import memory
import multi
from harness import Ctx, client, reset_mock, step, summary

reset_mock()
ctx = Ctx()
core.flows(ctx)
if not ctx.aid:
    sys.exit(summary() or 1)
memory.flows(ctx)
multi.flows(ctx)
extras.flows(ctx)

# --- reset, clean-up ---------------------------------------------------------------------------------------------
step(
    "agents.messages.reset",
    lambda: client.agents.messages.reset(ctx.aid, add_default_initial_messages=True),
    letta_too="the old SDK sends add_default_initial_messages as a query parameter; Letta 0.16.8 requires a body",
)
step(
    "agents.memory_variables.list",
    lambda: client.agents.memory_variables.list(ctx.aid),
    letta_too="GET /v1/agents/{id}/core-memory/variables is Letta Cloud's",
)
if ctx.agent2 is not None:
    step("agents.delete (second)", lambda: client.agents.delete(ctx.agent2.id))
step("agents.delete", lambda: client.agents.delete(ctx.aid))
if ctx.tool is not None:
    step("tools.delete", lambda: client.tools.delete(ctx.tool.id))
sys.exit(summary())
