"""The clock, message id and tool-call builder shared by the message-view and packing tests."""

import json
from datetime import UTC, datetime
from typing import Any

from memlet.messages.schemas import (
    OpenAIToolCall,
    ToolCallFunction,
)

NOW = datetime(2026, 11, 22, 3, 3, 38, 512345, tzinfo=UTC)
MSG_ID = "message-54ac6e05-90c9-4cbd-88a8-2492d965d727"


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> OpenAIToolCall:
    return OpenAIToolCall(id=call_id, function=ToolCallFunction(name=name, arguments=json.dumps(arguments)))
