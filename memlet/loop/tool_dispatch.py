"""Route one tool call to a built-in tool or to the user-tool sandbox, and shape the outcome.

Never raises for a tool's own failure: every outcome is a `ToolOutcome` whose `value` becomes the `message` of
the packed tool return the model reads.
"""

import inspect
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from memlet import metrics
from memlet.config import Settings
from memlet.crypto import Keyring, SecretDecryptError, keyring_for
from memlet.db import models as orm
from memlet.loop.builtin_tools import ToolContext, ToolError, set_block_value
from memlet.loop.builtins import BUILTIN_TOOLS, UNTRUNCATED_TOOLS
from memlet.loop.memory_edits import MemoryEditError, ensure_editable
from memlet.mcp.client import MCPError
from memlet.mcp.executor import run_mcp_tool
from memlet.tool_exec.sandbox import SandboxPolicy, run_tool

log = logging.getLogger(__name__)


@dataclass
class ToolOutcome:
    success: bool
    value: Any
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)


def failure(message: str, stderr: str | None = None) -> ToolOutcome:
    return ToolOutcome(success=False, value=message, stderr=[stderr] if stderr else [])


def agent_env(agent: orm.Agent, keyring: Keyring) -> dict[str, str]:
    """The agent's secrets, decrypted, as environment variables (the only variables a user tool sees besides
    PATH/LANG)."""
    return {str(s["key"]): str(s.get("value") or "") for s in keyring.reveal_secrets(agent.secrets) if s.get("key")}


def _truncate(name: str, value: Any, limit: int) -> Any:
    if name in UNTRUNCATED_TOOLS or not isinstance(value, str) or limit <= 0 or len(value) <= limit:
        return value
    return (
        f"{value[:limit]}... [NOTE: function output was truncated since it exceeded the character limit "
        f"({len(value)} > {limit})]"
    )


async def execute_tool(ctx: ToolContext, tool: orm.Tool, args: dict[str, Any], settings: Settings) -> ToolOutcome:
    """Run `tool` with `args` (already stripped of loop-only kwargs)."""
    started = time.perf_counter()
    outcome = await _execute(ctx, tool, args, settings)
    metrics.tool_executed(tool.tool_type, outcome.success, started)
    return outcome


async def _execute(ctx: ToolContext, tool: orm.Tool, args: dict[str, Any], settings: Settings) -> ToolOutcome:
    if tool.tool_type == "external_mcp":  # before built-ins: an MCP tool may share a built-in's name
        return await _run_mcp(ctx, tool, args, settings)
    builtin = BUILTIN_TOOLS.get(tool.name)
    if builtin is not None and tool.tool_type != "custom":
        return await _run_builtin(ctx, tool, builtin, args)
    if tool.tool_type != "custom" or not tool.source_code:
        return failure(f"Error: tool {tool.name} cannot be executed by this server.")
    try:
        env = agent_env(ctx.agent, keyring_for(settings))
    except SecretDecryptError as exc:
        log.error("tool %s not run: %s", tool.name, exc.message)
        return failure(f"Error: tool {tool.name} was not run: {exc.message}", exc.message)
    result = await run_tool(
        tool.source_code,
        tool.name,
        args,
        env=env,
        timeout_s=settings.tool_timeout_s,
        memory_mb=settings.tool_memory_mb,
        return_char_limit=tool.return_char_limit,
        policy=SandboxPolicy.from_settings(settings),
        agent_state=sandbox_agent_state(ctx) if "agent_state" in tool.source_code else None,
    )
    if result.status == "error":
        return ToolOutcome(False, result.func_return, result.stdout, result.stderr)
    if result.memory:
        try:
            save_sandbox_memory(ctx, result.memory)
        except (ToolError, MemoryEditError) as exc:
            return ToolOutcome(False, str(exc), result.stdout, [*result.stderr, str(exc)])
    value = result.value if result.value is not None else result.func_return
    return ToolOutcome(True, value, result.stdout, result.stderr)


def sandbox_agent_state(ctx: ToolContext) -> dict[str, Any]:
    """What a custom tool's `agent_state` holds: the agent's identity and its memory blocks as the step sees them."""
    agent = ctx.agent
    blocks = [
        {
            "id": b.id,
            "label": b.label,
            "value": b.value,
            "limit": b.limit,
            "description": b.description,
            "read_only": b.read_only,
        }
        for b in ctx.blocks
    ]
    return {
        "id": agent.id,
        "name": agent.name,
        "agent_type": agent.agent_type,
        "description": agent.description,
        "timezone": agent.timezone,
        "blocks": blocks,
    }


def save_sandbox_memory(ctx: ToolContext, memory: dict[str, str]) -> None:
    """Keep the block values a tool changed through `agent_state.memory` (as Letta saves the sandbox's memory),
    under the same rules as the memory tools: read-only blocks and character limits hold."""
    for block in ctx.blocks:
        value = memory.get(block.label)
        if value is None or value == block.value:
            continue
        ensure_editable(block.read_only)
        set_block_value(ctx, block, value)


async def _run_builtin(ctx: ToolContext, tool: orm.Tool, builtin: Any, args: dict[str, Any]) -> ToolOutcome:
    try:
        inspect.signature(builtin).bind(ctx, **args)
    except TypeError as exc:
        return failure(f"Error executing function {tool.name}: TypeError: {exc}")
    try:
        value = await builtin(ctx, **args)
    except (ToolError, MemoryEditError) as exc:
        text = str(exc)
        return failure(text, f"Error executing function {tool.name}: {type(exc).__name__}: {text}")
    except Exception as exc:  # a bug in a built-in must not abort the run; the model sees the error
        log.exception("built-in tool %s failed", tool.name)
        text = f"Error executing function {tool.name}: {type(exc).__name__}: {exc}"
        return failure(text, text)
    # Letta shows a tool that returned nothing as the text "None".
    return ToolOutcome(True, _truncate(tool.name, "None" if value is None else value, tool.return_char_limit))


async def _run_mcp(ctx: ToolContext, tool: orm.Tool, args: dict[str, Any], settings: Settings) -> ToolOutcome:
    """An MCP tool, on the server recorded by id in its metadata; a failure is the model's error text."""
    try:
        secrets = agent_env(ctx.agent, keyring_for(settings))
        result = await run_mcp_tool(ctx.sessionmaker, settings, tool, args, ctx.agent.id, secrets)
    except (MCPError, SecretDecryptError) as exc:
        text = f"Error executing function {tool.name}: {type(exc).__name__}: {exc}"[:1000]
        return failure(text, text)
    return ToolOutcome(result.success, _truncate(tool.name, result.text, tool.return_char_limit))
