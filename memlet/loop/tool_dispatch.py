"""Route one tool call to a built-in tool (the web tools with the agent's Exa key and the outbound policy), an MCP
server or the user-tool sandbox, and shape the outcome.

Never raises for a tool's own failure: every outcome is a `ToolOutcome` whose `value` becomes the `message` of
the packed tool return the model reads.
"""

import inspect
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from memlet import metrics
from memlet.config import Settings
from memlet.crypto import Keyring, SecretDecryptError, keyring_for
from memlet.db import models as orm
from memlet.loop.builtin_tools import ToolContext, ToolError, set_block_value
from memlet.loop.builtins import BUILTIN_TOOLS, UNTRUNCATED_TOOLS, WEB_TOOLS
from memlet.loop.memory_edits import MemoryEditError, ensure_editable
from memlet.loop.web_tools import WebToolError, web_access
from memlet.mcp.client import MCPError
from memlet.mcp.executor import run_mcp_tool
from memlet.tool_exec.returns import noted_over_limit
from memlet.tool_exec.sandbox import SandboxPolicy, run_tool

log = logging.getLogger(__name__)


@dataclass
class ToolOutcome:
    success: bool
    value: Any
    # The tool's output streams: lists (maybe empty) from the sandbox, as Letta's ToolExecutionResult has them;
    # None where nothing captured any (built-in tools, rule violations, denials).
    stdout: list[str] | None = None
    stderr: list[str] | None = None
    shaped: bool = False  # `value` is already the model's text (see `message_for_model`)
    # A client's result in parts (text and images), stored as given; `value` is then its text with a placeholder
    # per image, which chat-completion models get as it is (not packed), as in Letta.
    parts: list[dict[str, Any]] | None = None


def failure(message: str, stderr: str | None = None) -> ToolOutcome:
    return ToolOutcome(success=False, value=message, stderr=[stderr] if stderr else None)


def agent_env(agent: orm.Agent, keyring: Keyring) -> dict[str, str]:
    """The agent's secrets, decrypted, as environment variables (the only variables a user tool sees besides
    PATH/LANG)."""
    return {str(s["key"]): str(s.get("value") or "") for s in keyring.reveal_secrets(agent.secrets) if s.get("key")}


def _truncated(text: str, limit: int) -> str:
    return (
        f"{text[:limit]}... [NOTE: function output was truncated since it exceeded the character limit "
        f"({len(text)} > {limit})]"
    )


def returned_message(value: Any, limit: int | None, *, truncate: bool = True) -> Any:
    """What a tool's return becomes in the packed result the model reads, as in Letta: text stays text, None is
    "None", a dict stays an object, anything else (lists, numbers, booleans) is its Python text; past `limit`
    characters the text (a dict: its indented JSON) is cut with a note."""
    if isinstance(value, dict):
        if truncate and limit:
            encoded = json.dumps(value, indent=2, ensure_ascii=False, default=str)
            if len(encoded) > limit:
                return _truncated(encoded, limit)
        return value
    text = value if isinstance(value, str) else "None" if value is None else str(value)
    return _truncated(text, limit) if truncate and limit and len(text) > limit else text


async def execute_tool(ctx: ToolContext, tool: orm.Tool, args: dict[str, Any], settings: Settings) -> ToolOutcome:
    """Run `tool` with `args` (already stripped of loop-only kwargs)."""
    started = time.perf_counter()
    outcome = await _execute(ctx, tool, args, settings)
    metrics.tool_executed(tool.tool_type, outcome.success, started)
    return outcome


def message_for_model(tool: orm.Tool, outcome: ToolOutcome) -> ToolOutcome:
    """`outcome` with its value as the packed result shows it to the model (`noted_over_limit`, then
    `returned_message`, at the tool's limit; the search tools are never cut, as in Letta)."""
    if not outcome.shaped:
        truncate = tool.name not in UNTRUNCATED_TOOLS
        noted = noted_over_limit(outcome.value, tool.return_char_limit)
        outcome.value = returned_message(noted, tool.return_char_limit, truncate=truncate)
        outcome.shaped = True
    return outcome


async def _execute(ctx: ToolContext, tool: orm.Tool, args: dict[str, Any], settings: Settings) -> ToolOutcome:
    if tool.tool_type == "external_mcp":  # before built-ins: an MCP tool may share a built-in's name
        return await _run_mcp(ctx, tool, args, settings)
    web = WEB_TOOLS.get(tool.name) if tool.tool_type == "letta_builtin" else None
    if web is not None:
        return await _run_web(ctx, tool, web, args, settings)
    builtin = BUILTIN_TOOLS.get(tool.name)
    if builtin is not None and tool.tool_type != "custom":
        return await _run_builtin(ctx, tool, builtin, args)
    if tool.tool_type != "custom" or not tool.source_code:
        return failure(f"Error: tool {tool.name} cannot be executed by this server.")
    try:
        env = {**_project_env(ctx.agent), **agent_env(ctx.agent, keyring_for(settings)), **_ids_env(ctx.agent, tool)}
    except SecretDecryptError as exc:
        log.error("tool %s not run: %s", tool.name, exc.message)
        return failure(f"Error: tool {tool.name} was not run: {exc.message}", exc.message)
    result = await run_tool(
        tool.source_code,
        tool.name,
        _declared(tool, args),
        env=env,
        timeout_s=settings.tool_timeout_s,
        memory_mb=settings.tool_memory_mb,
        return_char_limit=tool.return_char_limit,
        policy=SandboxPolicy.from_settings(settings),
        agent_state=sandbox_agent_state(ctx) if "agent_state" in tool.source_code else None,
        agent_id=ctx.agent.id,
        args_json_schema=tool.args_json_schema,
    )
    if result.status == "error":
        return ToolOutcome(False, result.func_return, result.stdout, result.stderr)
    if result.memory:
        try:
            save_sandbox_memory(ctx, result.memory)
        except (ToolError, MemoryEditError) as exc:
            return ToolOutcome(False, str(exc), result.stdout, [*result.stderr, str(exc)])
    if result.value is None and result.func_return != "None":  # too large to come back raw: its text, already cut
        return ToolOutcome(True, result.func_return, result.stdout, result.stderr, shaped=True)
    return ToolOutcome(True, result.value, result.stdout, result.stderr)


def _declared(tool: orm.Tool, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments the tool's schema declares (Letta passes only those; others the model sent are dropped)."""
    properties = ((tool.json_schema or {}).get("parameters") or {}).get("properties")
    if not isinstance(properties, dict):
        return args
    return {name: value for name, value in args.items() if name in properties}


def _ids_env(agent: orm.Agent, tool: orm.Tool) -> dict[str, str]:
    """The ids Letta gives every tool run, over the agent's secrets: LETTA_AGENT_ID, LETTA_TOOL_ID and (when set)
    LETTA_PROJECT_ID."""
    env = {"LETTA_AGENT_ID": agent.id, "LETTA_TOOL_ID": tool.id}
    if agent.project_id:
        env["LETTA_PROJECT_ID"] = agent.project_id
    return env


def _project_env(agent: orm.Agent) -> dict[str, str]:
    """Letta also passes the agent's project as PROJECT_ID, under the agent's secrets (a secret of that name wins)."""
    return {"PROJECT_ID": agent.project_id} if agent.project_id else {}


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
            "metadata": b.metadata_,
        }
        for b in ctx.blocks
    ]
    return {
        "id": agent.id,
        "name": agent.name,
        "agent_type": agent.agent_type,
        "description": agent.description,
        "timezone": agent.timezone,
        "metadata": agent.metadata_,
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


def _unbindable(tool: orm.Tool, function: Any, first: Any, args: dict[str, Any]) -> ToolOutcome | None:
    """Letta's TypeError when the model's arguments do not fit the tool's signature (a missing or unknown one)."""
    try:
        inspect.signature(function).bind(first, **args)
    except TypeError as exc:
        return failure(f"Error executing function {tool.name}: TypeError: {exc}")
    return None


async def _run_builtin(ctx: ToolContext, tool: orm.Tool, builtin: Any, args: dict[str, Any]) -> ToolOutcome:
    if (unbound := _unbindable(tool, builtin, ctx, args)) is not None:
        return unbound
    try:
        value = await builtin(ctx, **args)
    except (ToolError, MemoryEditError) as exc:
        text = str(exc)
        return failure(text, f"Error executing function {tool.name}: {type(exc).__name__}: {text}")
    except Exception as exc:  # a bug in a built-in must not abort the run; the model sees the error
        log.exception("built-in tool %s failed", tool.name)
        text = f"Error executing function {tool.name}: {type(exc).__name__}: {exc}"
        return failure(text, text)
    return ToolOutcome(True, value)


async def _run_mcp(ctx: ToolContext, tool: orm.Tool, args: dict[str, Any], settings: Settings) -> ToolOutcome:
    """An MCP tool, on the server recorded by id in its metadata; a failure is the model's error text."""
    try:
        secrets = agent_env(ctx.agent, keyring_for(settings))
        result = await run_mcp_tool(ctx.sessionmaker, settings, tool, args, ctx.agent.id, secrets)
    except (MCPError, SecretDecryptError) as exc:
        text = f"Error executing function {tool.name}: {type(exc).__name__}: {exc}"[:1000]
        return failure(text, text)
    return ToolOutcome(result.success, result.text)


async def _run_web(ctx: ToolContext, tool: orm.Tool, web: Any, args: dict[str, Any], settings: Settings) -> ToolOutcome:
    """fetch_webpage or web_search, with Exa when the agent's secrets or the server hold a key."""
    try:
        access = web_access(settings, agent_env(ctx.agent, keyring_for(settings)))
    except SecretDecryptError as exc:
        log.error("tool %s not run: %s", tool.name, exc.message)
        return failure(f"Error: tool {tool.name} was not run: {exc.message}", exc.message)
    if (unbound := _unbindable(tool, web, access, args)) is not None:
        return unbound
    try:
        return ToolOutcome(True, await web(access, **args))
    except WebToolError as exc:
        text = exc.model_text(tool.name)
        return failure(text, text)
