"""What a send derives from its request before the loop runs: the retry token, the run's display options, how
its rows are shown, the group id its inputs carry; and the after-turn hook a send calls (sleeptime)."""

import hashlib
from typing import Any, Protocol

from memlet.actor import Actor
from memlet.llm.chat_format import is_v2
from memlet.loop.runner import InputItem
from memlet.messages.requests import LettaRequest
from memlet.runs.schemas import LettaRequestConfig
from memlet.turns.streaming import ViewOptions


class AfterTurn(Protocol):
    """What runs after each foreground turn (memlet.turns.sleeptime_runs.SleeptimeRuns)."""

    async def group_of(self, org_id: str, agent_id: str) -> str | None: ...
    async def after_turn(self, actor: Actor, agent_id: str, last_message_id: str | None) -> list[str]: ...


class DuplicateRequestError(Exception):
    """A run started by a request with the same otids is still active (a client's retry raced its first try)."""


def request_identity(req: LettaRequest) -> tuple[str | None, list[str]]:
    """A request's retry token (the first 16 hex digits of sha256 over its joined otids, as Letta) and otids."""
    otids = [str(otid) for m in req.messages or [] if (otid := getattr(m, "otid", None))]
    if not otids:
        return None, []
    return hashlib.sha256("|".join(otids).encode()).hexdigest()[:16], otids


def request_config(req: LettaRequest) -> dict[str, Any]:
    """The display options stored on the run (``Run.request_config``)."""
    return LettaRequestConfig(
        use_assistant_message=req.use_assistant_message,
        assistant_message_tool_name=req.assistant_message_tool_name,
        assistant_message_tool_kwarg=req.assistant_message_tool_kwarg,
        include_return_message_types=req.include_return_message_types,
    ).model_dump(mode="json")


def view_options(agent_type: str, req: LettaRequest) -> ViewOptions:
    """How a send's response shows its messages, as Letta's loops render them.

    V3 agents (letta_v1, sleeptime) reply in plain text, and a `send_message` call they make is shown as the tool
    call and return it is (Letta's V3 loop ignores `use_assistant_message`). V2 agents think in text and reply via
    `send_message`, shown as an assistant message unless the request turns that off; the loop ignores a custom
    `assistant_message_tool_name` / `_kwarg` (only message listings honour them).
    """
    v2 = is_v2(agent_type)
    return ViewOptions(
        text_is_assistant=not v2,
        use_assistant_message=v2 and req.use_assistant_message,
        include_types=req.include_return_message_types,
        reasoning_source="non_reasoner_model" if v2 else "reasoner_model",
        summary_as_user=not req.include_compaction_messages,
    )


def tagged(inputs: list[InputItem], group_id: str | None) -> list[InputItem]:
    """The inputs of a sleeptime group's manager carry the group id (they are the group's messages): messages,
    approval answers and client tool returns alike, as Letta tags every input."""
    if group_id is None:
        return inputs
    return [i.model_copy(update={"group_id": group_id}) for i in inputs]


def logprobs_override(req: LettaRequest) -> dict[str, Any] | None:
    """The llm_config fields a blocking send to an agent sets for its turn when it asks for logprobs or token ids
    (Letta's agent send route copies all three onto the config then, and only then; its streamed, async and
    conversation sends leave the agent's own)."""
    if not (req.return_logprobs or req.return_token_ids):
        return None
    return {
        "return_logprobs": req.return_logprobs,
        "top_logprobs": req.top_logprobs,
        "return_token_ids": req.return_token_ids,
    }
