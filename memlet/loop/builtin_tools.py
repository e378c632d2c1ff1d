"""Built-in core tools: send_message, conversation_search and the memory-block editors.

Memory tools edit the blocks the step loaded (`ToolContext.blocks`), not the database: the loop writes the
changed blocks in the same transaction that commits the step's messages, so a step's memory edits and its
messages land together or not at all. A block's character limit is shown to the model but not enforced (as in
Letta 0.16.8). Every function raises `ToolError` (or `MemoryEditError`) with the text the model should see.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet import ids
from memlet.actor import Actor
from memlet.db import models as orm
from memlet.db.driver import lone_statements
from memlet.errors import MemletError
from memlet.loop import memory_edits as edits
from memlet.loop.agent_messaging import AgentMessenger
from memlet.loop.memory_patch import apply_hunks, check_patch, is_multi_block, parse_operations
from memlet.messages.embedding_repository import MessageEmbeddingRepository, MessageScope
from memlet.messages.hybrid import Hit, hybrid_search, text_search
from memlet.messages.search_fields import search_result_fields
from memlet.passages.embedder import Embedder
from memlet.passages.repository import PassageFilters
from memlet.passages.service import PassageService
from memlet.passages.views import archival_results

SEND_MESSAGE_RESULT = "Sent message successfully."
# The limit of a block an agent creates with its memory tools: Letta's default block limit.
NEW_BLOCK_LIMIT = 100000


class ToolError(Exception):
    """A tool failed; the message is the tool return the model sees."""


@dataclass
class ToolContext:
    """What a built-in tool may read and change during one step."""

    agent: orm.Agent
    blocks: list[orm.Block]
    sessionmaker: async_sessionmaker[AsyncSession]
    changed: set[str] = field(default_factory=set)  # ids of blocks whose value/label/description changed
    created: list[orm.Block] = field(default_factory=list)
    detached: list[str] = field(default_factory=list)
    embedder: Embedder | None = None
    archival_changed: bool = False  # a passage was inserted: the prompt's archival metadata must be recompiled
    files_changed: bool = False  # a file was opened or closed: the prompt's file blocks must be recompiled
    # The multi-agent tools run other agents' turns through this hook; `agent_chain` lists the agents waiting on
    # this turn (`loop/agent_messaging.py`).
    messenger: AgentMessenger | None = None
    agent_chain: tuple[str, ...] = ()

    def block(self, label: str) -> orm.Block:
        for block in self.blocks:
            if block.label == label:
                return block
        raise edits.unknown_label_error(label, [b.label for b in self.blocks])

    @property
    def memory_changed(self) -> bool:
        return bool(self.changed or self.created or self.detached or self.archival_changed or self.files_changed)

    @property
    def actor(self) -> Actor:
        return Actor(self.agent.created_by_id or ids.DEFAULT_USER_ID, self.agent.organization_id)


def set_block_value(ctx: ToolContext, block: orm.Block, value: str) -> str:
    """Give `block` a new value; the step saves it. Its character limit is shown to the model but not enforced,
    as in Letta 0.16.8 (which stopped enforcing it, so a block that grew past it stays editable)."""
    block.value = value
    ctx.changed.add(block.id)
    return value


async def send_message(ctx: ToolContext, message: str = "") -> str:
    del ctx, message
    return SEND_MESSAGE_RESULT


async def core_memory_append(ctx: ToolContext, label: str, content: str) -> str:
    block = ctx.block(label)
    return set_block_value(ctx, block, edits.core_memory_append(block.value, content, read_only=block.read_only))


async def core_memory_replace(ctx: ToolContext, label: str, old_content: str, new_content: str) -> str:
    block = ctx.block(label)
    value = edits.core_memory_replace(block.value, label, old_content, new_content, read_only=block.read_only)
    return set_block_value(ctx, block, value)


async def memory_replace(ctx: ToolContext, label: str, old_string: str, new_string: str) -> str:
    block = ctx.block(label)
    value = edits.memory_replace(block.value, label, old_string, new_string, read_only=block.read_only)
    return set_block_value(ctx, block, value)


async def memory_insert(ctx: ToolContext, label: str, new_string: str, insert_line: int = -1) -> str:
    block = ctx.block(label)
    return set_block_value(
        ctx, block, edits.memory_insert(block.value, new_string, insert_line, read_only=block.read_only)
    )


async def memory_rethink(ctx: ToolContext, label: str, new_memory: str) -> str:
    block = ctx.block(label)
    return set_block_value(ctx, block, edits.memory_rethink(new_memory, read_only=block.read_only))


async def memory_finish_edits(ctx: ToolContext) -> None:
    del ctx


def _block_at(ctx: ToolContext, label: str) -> orm.Block:
    """A block named by a `/memories/<label>` path (its own error text, unlike the label-addressed tools)."""
    for block in ctx.blocks:
        if block.label == label:
            return block
    raise edits.missing_block_error(label)


def _create_block(ctx: ToolContext, label: str, description: str, value: str) -> None:
    if any(b.label == label for b in ctx.blocks):
        raise edits.block_exists_error(label)
    block = orm.Block(
        id=ids.new_id(ids.Prefix.BLOCK),
        organization_id=ctx.agent.organization_id,
        label=label,
        value=value,
        limit=NEW_BLOCK_LIMIT,
        description=description,
        read_only=False,
    )
    ctx.blocks.append(block)
    ctx.created.append(block)


def _delete_block(ctx: ToolContext, label: str) -> None:
    block = _block_at(ctx, label)
    edits.ensure_editable(block.read_only)
    ctx.blocks.remove(block)
    ctx.detached.append(block.id)


def _rename_block(ctx: ToolContext, old_label: str, new_label: str) -> None:
    block = _block_at(ctx, old_label)
    if any(b.label == new_label for b in ctx.blocks):
        raise edits.block_exists_error(new_label)
    block.label = new_label
    ctx.changed.add(block.id)


async def memory(ctx: ToolContext, command: str, **kwargs: Any) -> str:
    """The omni `memory` tool: plan the command, then apply it to the loaded blocks."""
    plan = edits.plan_memory_command(command, **kwargs)
    # str_replace and insert look the block up as the label-addressed tools do (Letta's error lists the labels).
    if isinstance(plan, edits.StrReplacePlan):
        block = ctx.block(plan.label)
        value = edits.memory_replace(
            block.value, plan.label, plan.old_string, plan.new_string, read_only=block.read_only
        )
        return set_block_value(ctx, block, value)
    if isinstance(plan, edits.InsertPlan):
        block = ctx.block(plan.label)
        value = edits.memory_insert(
            block.value, plan.insert_text, plan.insert_line, read_only=block.read_only, arg_name="insert_text"
        )
        return set_block_value(ctx, block, value)
    if isinstance(plan, edits.CreatePlan):
        _create_block(ctx, plan.label, plan.description, plan.value)
    elif isinstance(plan, edits.DeletePlan):
        _delete_block(ctx, plan.label)
    elif isinstance(plan, edits.RenamePlan):
        _rename_block(ctx, plan.old_label, plan.new_label)
    elif isinstance(plan, edits.DescribePlan):
        block = _block_at(ctx, plan.label)
        block.description = plan.description
        ctx.changed.add(block.id)
    return edits.plan_result(plan)


async def memory_apply_patch(ctx: ToolContext, label: str, patch: str) -> str:
    """Apply a diff to one block (returns its new value) or `***` operations to several (returns a summary).

    Operations run in order on the step's blocks; the first that fails stops the patch, and the step's
    transaction then holds whatever ran before it, as Letta's tool keeps its earlier operations.
    """
    patch = check_patch(patch)
    if not is_multi_block(patch):
        block = _block_at(ctx, label)
        edits.ensure_editable(block.read_only)
        return set_block_value(ctx, block, apply_hunks(block.value, patch))
    done: list[str] = []
    for op in parse_operations(patch):
        if op.kind == "add":
            _create_block(ctx, op.label, op.description, "\n".join(op.lines).rstrip("\n"))
            done.append(f"Created memory block '{op.label}'")
        elif op.kind == "delete":
            _delete_block(ctx, op.label)
            done.append(f"Deleted memory block '{op.label}'")
        elif op.kind == "rename":
            _rename_block(ctx, op.label, op.new_label)
            done.append(f"Renamed memory block '{op.label}' to '{op.new_label}'")
        else:
            block = _block_at(ctx, op.label)
            edits.ensure_editable(block.read_only)
            set_block_value(ctx, block, apply_hunks(block.value, "\n".join(op.lines)))
            done.append(f"Updated memory block '{op.label}'")
    return (
        "Successfully applied memory patch operations. Your system prompt has been recompiled with the updated "
        "memory contents and is now active in your context.\n\nOperations completed:\n- " + "\n- ".join(done)
    )


async def archival_memory_insert(ctx: ToolContext, content: str, tags: list[str] | None = None) -> None:
    """Embed and store `content` in the agent's default archive. Returns None, as Letta's tool does."""
    try:
        async with ctx.sessionmaker() as session, session.begin():
            await PassageService(session, ctx.embedder).insert_for_agent(ctx.actor, ctx.agent.id, content, tags)
    except MemletError as exc:
        raise ToolError(exc.message) from exc
    ctx.archival_changed = True


async def archival_memory_search(
    ctx: ToolContext,
    query: str,
    tags: list[str] | None = None,
    tag_match_mode: str = "any",
    top_k: int | None = None,
    start_datetime: str | None = None,
    end_datetime: str | None = None,
) -> list[dict[str, Any]]:
    """Semantic search of the agent's archival memory: a list of {id, timestamp, content, tags}."""
    zone = _zone(ctx.agent.timezone)
    filters = PassageFilters(
        tags=tags or (),
        tag_match_mode="all" if tag_match_mode == "all" else "any",
        start=_parse_when(start_datetime, zone, end=False, name="start_datetime"),
        end=_parse_when(end_datetime, zone, end=True, name="end_datetime"),
    )
    try:
        async with ctx.sessionmaker() as session, session.begin():
            service = PassageService(session, ctx.embedder)
            hits = await service.search_agent(ctx.actor, ctx.agent, query, filters, top_k)
    except MemletError as exc:
        raise ToolError(exc.message) from exc
    return archival_results(hits, ctx.agent.timezone)


# --- conversation_search ----------------------------------------------------------------------------------


def _zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def _parse_when(value: str | None, zone: ZoneInfo, *, end: bool, name: str) -> datetime | None:
    """ISO date or datetime; a bare date covers the whole day; naive values are in the agent's timezone. A value
    that is neither is the model's error, worded as Letta's tools word it, naming the argument (`name`)."""
    if not value:
        return None
    try:
        if len(value) <= 10:
            day = date.fromisoformat(value)
            moment = datetime.combine(day, time.max if end else time.min)
        else:
            moment = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ToolError(
            f"Invalid {name} format: {value}. Use ISO 8601 format (YYYY-MM-DD or YYYY-MM-DDTHH:MM)"
        ) from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=zone)


def _time_ago(moment: datetime, now: datetime) -> str:
    seconds = int((now - moment).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


async def conversation_search(
    ctx: ToolContext,
    query: str | None = None,
    roles: list[str] | None = None,
    limit: int | None = None,
    start_date: str | None = None,
    end_date: str | None = None,
) -> dict[str, Any]:
    """Hybrid search over this agent's user and assistant messages, best match first (`memlet.messages.hybrid`).

    Tool messages and the agent's own conversation_search calls are never results (as in Letta), so asking for
    `roles=["tool"]` alone finds nothing. Like Letta it returns an object, so the packed tool return holds it
    as a JSON object (not a string) and the API's `tool_return` shows its Python repr.
    """
    zone = _zone(ctx.agent.timezone)
    start = _parse_when(start_date, zone, end=False, name="start_date")
    end = _parse_when(end_date, zone, end=True, name="end_date")
    wanted = [r for r in (roles or ["user", "assistant"]) if r in ("user", "assistant")]
    hits: list[Hit] = []
    configs: list[dict[str, Any]] = []
    if wanted:
        scope = MessageScope(roles=wanted, agent_id=ctx.agent.id, start=start, end=end)
        # Without vectors in scope the search is one SELECT on the driver, with no transaction and no session; the
        # vector ranking needs a transaction for its `SET LOCAL hnsw.ef_search`.
        async with lone_statements(ctx.sessionmaker) as driver:
            configs = await MessageEmbeddingRepository.configs_via(driver, scope) if query and ctx.embedder else []
            if not configs:
                hits = await text_search(driver, query=query, scope=scope, limit=limit or 5)
        if configs:
            async with ctx.sessionmaker() as session:
                hits = await hybrid_search(
                    session,
                    embedder=ctx.embedder,
                    query=query,
                    mode="hybrid",
                    scope=scope,
                    limit=limit or 5,
                    org_id=ctx.actor.organization_id,
                    configs=configs,
                )
    if not wanted or not hits:
        return {"message": "No results found.", "results": []}
    now = datetime.now(UTC)
    mode = "hybrid" if configs else "fts" if query else "timestamp"
    results = [
        {
            "timestamp": hit.row.created_at.astimezone(zone).isoformat(),
            "time_ago": _time_ago(hit.row.created_at, now),
            "role": hit.row.role,
            "relevance": _relevance(hit, mode),
            **search_result_fields(hit.row),
        }
        for hit in hits
    ]
    return {"message": f"Showing {len(results)} results:", "results": results}


def _relevance(hit: Hit, mode: str) -> dict[str, Any]:
    """How a result ranked, as Letta's tool reports it: the fused score and each ranking it placed in (when it
    did), and the search mode."""
    ranks = {"rrf_score": hit.rrf_score or None, "vector_rank": hit.vector_rank, "fts_rank": hit.fts_rank}
    return {**{k: v for k, v in ranks.items() if v is not None}, "search_mode": mode}


BuiltinTool = Callable[..., Awaitable[Any]]

BUILTIN_TOOLS: dict[str, BuiltinTool] = {
    "send_message": send_message,
    "conversation_search": conversation_search,
    "core_memory_append": core_memory_append,
    "core_memory_replace": core_memory_replace,
    "memory_replace": memory_replace,
    "memory_insert": memory_insert,
    "memory_rethink": memory_rethink,
    "memory_finish_edits": memory_finish_edits,
    "memory": memory,
    "memory_apply_patch": memory_apply_patch,
    "archival_memory_insert": archival_memory_insert,
    "archival_memory_search": archival_memory_search,
}

# Tools whose results Letta never truncates.
UNTRUNCATED_TOOLS = frozenset({"conversation_search", "conversation_search_date", "archival_memory_search"})
