"""A page of agents as JSON bytes, each tool encoded once however many agents of the page hold it.

A page of 50 agents is ~640 KB, most of it the tools' JSON schemas, and the agents of a page share their tool rows
(`AgentService.relations` builds one `Tool` per row). Each agent is encoded by pydantic in two parts, the fields
before ``tools`` and the fields after, and its tools' bytes go between them; the result is byte for byte what
``TypeAdapter(list[AgentState]).dump_json(states, by_alias=True)`` (FastAPI's response serialization) gives.
"""

from collections.abc import Sequence

from pydantic import BaseModel

from memlet.agents.schemas import AgentState
from memlet.tools.schemas import Tool

_FIELDS = list(AgentState.model_fields)
_AT = _FIELDS.index("tools")
_HEAD = set(_FIELDS[:_AT])
_TAIL = set(_FIELDS[_AT + 1 :])
_KEY = b'"' + (AgentState.model_fields["tools"].serialization_alias or "tools").encode() + b'":['


def _encode(model: BaseModel, include: set[str] | None = None) -> bytes:
    return model.__pydantic_serializer__.to_json(model, include=include, by_alias=True)


def agent_parts(state: AgentState) -> tuple[bytes, bytes]:
    """The agent's JSON object before its tools (``{...,"tools":[``) and after them (``],...}``)."""
    head, tail = _encode(state, _HEAD), _encode(state, _TAIL)
    return head[:-1] + b"," + _KEY, b"]," + tail[1:]


def encode_agents(states: Sequence[AgentState]) -> bytes:
    """``states`` as a JSON array, as FastAPI would send ``list[AgentState]``."""
    return join_page([(*agent_parts(state), state.tools) for state in states])


def join_page(agents: Sequence[tuple[bytes, bytes, Sequence[Tool]]]) -> bytes:
    """A page as a JSON array from each agent's `agent_parts` and its tools."""
    tools: dict[int, bytes] = {}  # by id(): the page's agents share their Tool objects

    def tool_json(tool: Tool) -> bytes:
        encoded = tools.get(id(tool))
        if encoded is None:
            encoded = tools[id(tool)] = _encode(tool)
        return encoded

    # Every piece of the page in one list, joined once (a page is ~640 KB: each extra join copies it).
    parts: list[bytes] = [b"["]
    for n, (head, tail, agent_tools) in enumerate(agents):
        if n:
            parts.append(b",")
        parts += (head, b",".join([tool_json(t) for t in agent_tools]), tail)
    parts.append(b"]")
    return b"".join(parts)
