"""Prefixed ids (``agent-<uuid4>``), generated and validated in one place.

Letta's ids are ``<prefix>-<uuid4>``. Path parameters use the ``*Id`` annotated types below so a malformed id
is a 422 before any SQL runs, and a well-formed unknown id is a 404 naming it.
"""

import re
import uuid
from enum import StrEnum
from typing import Annotated

from fastapi import Path


class Prefix(StrEnum):
    AGENT = "agent"
    BLOCK = "block"
    TOOL = "tool"
    MESSAGE = "message"
    RUN = "run"
    STEP = "step"
    PASSAGE = "passage"
    SOURCE = "source"
    FILE = "file"
    IDENTITY = "identity"
    GROUP = "group"
    PROVIDER = "provider"
    ORGANIZATION = "org"
    USER = "user"
    ARCHIVE = "archive"
    JOB = "job"
    SANDBOX_CONFIG = "sandbox"
    MCP_SERVER = "mcp_server"
    CONVERSATION = "conv"


_UUID = "[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"

# Letta's well-known defaults (an unknown or absent ``user_id`` header acts as this user).
DEFAULT_ORG_ID = "org-00000000-0000-4000-8000-000000000000"
DEFAULT_USER_ID = "user-00000000-0000-4000-8000-000000000000"
DEFAULT_ORG_NAME = "default_org"
DEFAULT_USER_NAME = "default_user"


def new_id(prefix: Prefix | str) -> str:
    """A fresh ``<prefix>-<uuid4>`` id."""
    return f"{prefix}-{uuid.uuid4()}"


def id_pattern(prefix: Prefix | str) -> str:
    return f"^{prefix}-{_UUID}$"


def is_valid(value: str, prefix: Prefix | str) -> bool:
    return re.fullmatch(id_pattern(prefix), value) is not None


def _path_id(prefix: Prefix, name: str) -> object:
    return Path(
        pattern=id_pattern(prefix),
        min_length=len(prefix) + 37,
        max_length=len(prefix) + 37,
        description=f"The ID of the {name} in the format '{prefix}-<uuid4>'",
        examples=[f"{prefix}-123e4567-e89b-42d3-8456-426614174000"],
    )


AgentId = Annotated[str, _path_id(Prefix.AGENT, "agent")]
BlockId = Annotated[str, _path_id(Prefix.BLOCK, "block")]
ToolId = Annotated[str, _path_id(Prefix.TOOL, "tool")]
MessageId = Annotated[str, _path_id(Prefix.MESSAGE, "message")]
RunId = Annotated[str, _path_id(Prefix.RUN, "run")]
StepId = Annotated[str, _path_id(Prefix.STEP, "step")]
PassageId = Annotated[str, _path_id(Prefix.PASSAGE, "passage")]
ArchiveId = Annotated[str, _path_id(Prefix.ARCHIVE, "archive")]
IdentityId = Annotated[str, _path_id(Prefix.IDENTITY, "identity")]
ProviderId = Annotated[str, _path_id(Prefix.PROVIDER, "provider")]
SourceId = Annotated[str, _path_id(Prefix.SOURCE, "source")]
FileId = Annotated[str, _path_id(Prefix.FILE, "file")]
JobId = Annotated[str, _path_id(Prefix.JOB, "job")]
ConversationId = Annotated[str, _path_id(Prefix.CONVERSATION, "conv")]
GroupId = Annotated[str, _path_id(Prefix.GROUP, "group")]
# A thread: a conversation, `default` (with an agent_id) or, deprecated, an agent id (its default thread).
ThreadId = Annotated[
    str,
    Path(
        pattern=f"^(default|{Prefix.CONVERSATION}-{_UUID}|{Prefix.AGENT}-{_UUID})$",
        min_length=1,
        max_length=42,
        description=(
            "The conversation identifier. Can be a conversation ID ('conv-<uuid4>'), 'default' for agent-direct "
            "mode (with agent_id parameter), or an agent ID ('agent-<uuid4>') for backwards compatibility "
            "(deprecated)."
        ),
        examples=["default", f"{Prefix.CONVERSATION}-123e4567-e89b-42d3-8456-426614174000"],
    ),
]
