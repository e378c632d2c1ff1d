"""The multi-agent tools (`letta_multi_agent_core`), run in-process through `ToolContext.messenger`.

Letta runs them in its sandbox and calls back over HTTP; here the target's turn is a normal run of this server's
loop (see `agent_messaging`). The inputs, prefixes and return strings are Letta's: the target reads one `system`
message naming the sender, and a reply is returned as the Python repr of `{'agent_id': ..., 'response': [...]}`.
"""

import asyncio
from typing import Any

from memlet import ids
from memlet.agents.list_filters import AgentFilters
from memlet.agents.repository import AgentRepository
from memlet.db.pagination import Page
from memlet.db.sql import storable_text
from memlet.errors import MemletError
from memlet.loop.agent_messaging import AgentMessage, chain_error
from memlet.loop.builtin_tools import BuiltinTool, ToolContext, ToolError

SENT_ASYNC = "Successfully sent message"
NO_RESPONSE = "<no response>"
# How many agents a tag broadcast considers, as Letta's tool reads them: one page of the agent list, its default
# 50 for a tag search, 100 when `match_all` is empty (the newest agents, whatever their tags).
TAG_PAGE = 50
UNTAGGED_PAGE = 100
# How many of them are asked at once (each takes a turn slot of this worker while it runs).
TAG_CONCURRENCY = 8


def reply_request(sender_id: str, message: str) -> str:
    """A message whose sender waits for the reply. Like Letta, a message with capitals also carries a lowercase
    copy on a new line (Letta does it so the target matches words whatever their case)."""
    body = message if message == message.lower() else f"{message}\n{message.lower()}"
    return f"[Incoming message from agent with ID '{sender_id}' - your response will be delivered to the sender] {body}"


def notification(sender_id: str, message: str) -> str:
    """A one-way message (the target's reply goes nowhere)."""
    return (
        f"[Incoming message from agent with ID '{sender_id}' - this is a one-way notification; if you need to "
        f"respond, use an agent-to-agent messaging tool if available] {message}"
    )


def _message(value: object) -> str:
    """The model's `message` argument as text the target's turn can store (it may hold a NUL or a lone surrogate)."""
    if not isinstance(value, str):
        raise ToolError(f"message must be a string, not {type(value).__name__}")
    return storable_text(value)


def _known_id_shape(target_id: object) -> str:
    """The model's `other_agent_id`, refused here when it cannot name an agent (a number, a list, a NUL...), so the
    lookup never sends it to the database."""
    if not isinstance(target_id, str) or not ids.is_valid(target_id, ids.Prefix.AGENT):
        shown = target_id if isinstance(target_id, str) else repr(target_id)
        raise ToolError(f"Could not deliver the message to agent {storable_text(shown)[:100]}: not an agent id")
    return target_id


async def _deliver(ctx: ToolContext, target_id: str, text: str) -> list[str]:
    """Run the target's turn and return its assistant texts; raises ToolError with the text the model sees."""
    if ctx.messenger is None:
        raise ToolError("Agent-to-agent messages can only be sent during an agent's turn.")
    target_id = _known_id_shape(target_id)
    refused = chain_error(ctx.agent_chain, ctx.agent.id, target_id)
    if refused is not None:
        raise ToolError(refused)
    chain = (*ctx.agent_chain, ctx.agent.id)
    try:
        return await ctx.messenger.deliver(AgentMessage(ctx.actor, target_id, text, chain))
    except MemletError as exc:
        raise ToolError(f"Could not deliver the message to agent {target_id}: {exc.message}") from exc


async def send_message_to_agent_and_wait_for_reply(ctx: ToolContext, message: str, other_agent_id: str) -> str:
    """Send `message` to another agent and return its reply as Letta's repr string."""
    texts = await _deliver(ctx, other_agent_id, reply_request(ctx.agent.id, _message(message)))
    return str({"agent_id": other_agent_id, "response": texts or [NO_RESPONSE]})


async def send_message_to_agent_async(ctx: ToolContext, message: str, other_agent_id: str) -> str:
    """Notify another agent. As in Letta the call returns once the target's turn has ended."""
    await _deliver(ctx, other_agent_id, notification(ctx.agent.id, _message(message)))
    return SENT_ASYNC


async def _tag_recipients(ctx: ToolContext, match_all: list[str], match_some: list[str]) -> list[str]:
    """As Letta's tool: the newest 50 agents of the sender's organization with every tag of `match_all` (the newest
    100 when it is empty) that are also among the newest 50 with any tag of `match_some` (when given), newest first,
    without the sender. Hidden agents (subagents, say) are left out, as Letta's agent list leaves them out."""
    org_id = ctx.agent.organization_id
    async with ctx.sessionmaker() as session:
        repo = AgentRepository(session)
        every = AgentFilters(tags=match_all, match_all_tags=True, exclude_hidden=True)
        page = Page(limit=TAG_PAGE if match_all else UNTAGGED_PAGE)
        candidates = await repo.list_page(org_id, every, page, sort_by="created_at")
        some: set[str] | None = None
        if match_some:
            any_of = AgentFilters(tags=match_some, match_all_tags=False, exclude_hidden=True)
            some = {a.id for a in await repo.list_page(org_id, any_of, Page(limit=TAG_PAGE), sort_by="created_at")}
    return [a.id for a in candidates if a.id != ctx.agent.id and (some is None or a.id in some)]


def _tag_list(tags: object) -> list[str]:
    """The tags a model passed: a list, or one bare tag (a string is one tag, not its characters)."""
    if tags is None:
        return []
    if isinstance(tags, str):
        return [storable_text(tags)]
    if not isinstance(tags, list):
        raise ToolError(f"tags must be a list of strings, not {type(tags).__name__}")
    return [storable_text(str(t)) for t in tags]


async def send_message_to_agents_matching_tags(
    ctx: ToolContext, message: str, match_all: list[str], match_some: list[str]
) -> str:
    """Ask the matching agents at the same time, as Letta does (`TAG_CONCURRENCY` at once: one after the other,
    each busy recipient cost a whole lock wait); one `{'agent_id', 'response'}` per agent in the order found,
    errors as `'<error: ...>'`."""
    slots = asyncio.Semaphore(TAG_CONCURRENCY)

    async def ask(agent_id: str) -> dict[str, Any]:
        async with slots:
            try:
                texts = await _deliver(ctx, agent_id, request)
            except ToolError as exc:
                texts = [f"<error: {exc}>"]
        return {"agent_id": agent_id, "response": texts or [NO_RESPONSE]}

    request = reply_request(ctx.agent.id, _message(message))
    recipients = await _tag_recipients(ctx, _tag_list(match_all), _tag_list(match_some))
    results = await asyncio.gather(*(ask(agent_id) for agent_id in recipients))
    # Letta's tool returns the list itself, which its executor turns into this repr.
    return str(results)


MULTI_AGENT_TOOLS: dict[str, BuiltinTool] = {
    "send_message_to_agent_and_wait_for_reply": send_message_to_agent_and_wait_for_reply,
    "send_message_to_agents_matching_tags": send_message_to_agents_matching_tags,
    "send_message_to_agent_async": send_message_to_agent_async,
}
