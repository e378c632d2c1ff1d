"""One conversion of a step's buffer to chat messages, shared by the compaction check before the call and the
request itself (each converted the whole buffer before, and the cost grows with the agent's history).
"""

import operator
from collections.abc import Sequence
from typing import Any

from memlet.db.message_row import MessageLike
from memlet.llm.chat_format import buffer_messages, is_v2


class BufferChat:
    """The last rows converted (`buffer_messages`), reused while they are the very same row objects.

    One per step (`compaction_step.Site`): the step's rows do not change between its compaction check and its
    request; any other list of rows (a compaction's candidate cut, the buffer after a commit) is converted anew.
    """

    def __init__(self) -> None:
        self._rows: tuple[MessageLike, ...] = ()
        self._converted: dict[tuple[str, bool], list[dict[str, Any]]] = {}
        self.conversions = 0  # how many times rows were converted (for tests)

    def buffer(
        self, rows: Sequence[MessageLike], agent_type: str, *, inner_thoughts_in_kwargs: bool = True
    ) -> list[dict[str, Any]]:
        """`buffer_messages(rows, ...)`; the caller must not modify the list or its messages."""
        if len(rows) != len(self._rows) or not all(map(operator.is_, rows, self._rows)):
            self._rows, self._converted = tuple(rows), {}
        # The thoughts flag only changes a V2 agent's messages.
        key = (agent_type, is_v2(agent_type) and inner_thoughts_in_kwargs)
        converted = self._converted.get(key)
        if converted is None:
            converted = self._converted[key] = buffer_messages(rows, agent_type, inner_thoughts_in_kwargs=key[1])
            self.conversions += 1
        return converted


def converted(
    chat: BufferChat | None, rows: Sequence[MessageLike], agent_type: str, *, inner_thoughts_in_kwargs: bool = True
) -> list[dict[str, Any]]:
    """The rows' chat messages, through `chat` when there is one."""
    if chat is None:
        return buffer_messages(rows, agent_type, inner_thoughts_in_kwargs=inner_thoughts_in_kwargs)
    return chat.buffer(rows, agent_type, inner_thoughts_in_kwargs=inner_thoughts_in_kwargs)
