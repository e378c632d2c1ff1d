"""One conversion of a turn's buffer to chat messages, shared by the compaction checks and the requests of its
steps (each converted the whole buffer before, and the cost grows with the agent's history).
"""

import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, count, repeat
from typing import Any

from memlet.db.message_row import MessageLike, MessageRow
from memlet.llm.chat_format import buffer_messages, is_v2


@dataclass
class _Conversion:
    rows: tuple[MessageLike, ...]
    messages: list[dict[str, Any]]
    ends: list[int]  # len(messages) after each row


class BufferChat:
    """The last rows converted (`buffer_messages`), per conversion mode, reused while they are the very same row
    objects; a list that starts with rows of the last one converts only the rows after them.

    One per turn (`RunState.chat`): a step's compaction check and its request convert the same rows, and the
    next step's buffer is the same loaded rows plus the ones the step committed. Only read-only `MessageRow`s
    are reused across lists (the input rows of a step are ORM entities, whose content may still change before
    they are committed); any other list (a compaction's candidate cut, the buffer after a reload) is converted
    anew.
    """

    def __init__(self) -> None:
        self._last: dict[tuple[str, bool], _Conversion] = {}
        self.conversions = 0  # how many times rows were converted (for tests)
        self.rows_converted = 0  # how many rows those conversions converted (for tests)

    def buffer(
        self, rows: Sequence[MessageLike], agent_type: str, *, inner_thoughts_in_kwargs: bool = True
    ) -> list[dict[str, Any]]:
        """`buffer_messages(rows, ...)`; the caller must not modify the list or its messages."""
        # The thoughts flag only changes a V2 agent's messages.
        key = (agent_type, is_v2(agent_type) and inner_thoughts_in_kwargs)
        last = self._last.get(key)
        if last is not None and len(rows) == len(last.rows) and all(map(operator.is_, rows, last.rows)):
            return last.messages
        keep = 0 if last is None else _reusable(last, rows)
        ends = last.ends[:keep] if last is not None else []
        before = last.messages[: ends[-1]] if last is not None and keep else []
        messages = buffer_messages(rows[keep:], agent_type, inner_thoughts_in_kwargs=key[1], before=before, ends=ends)
        self._last[key] = _Conversion(tuple(rows), messages, ends)
        self.conversions += 1
        self.rows_converted += len(rows) - keep
        return messages


def _reusable(last: _Conversion, rows: Sequence[MessageLike]) -> int:
    """How many leading rows of `rows` keep their messages from `last`: the common prefix of `MessageRow`s,
    shortened so that the first old row left out added a message of its own (a row that adds none may be an
    approval that extended the message before it, or be followed by one)."""
    old = last.rows
    keep = _first(map(operator.is_not, rows, old), min(len(rows), len(old)))
    keep = _first(map(operator.is_not, map(type, old[:keep]), repeat(MessageRow)), keep)
    ends = last.ends
    while 0 < keep < len(old) and ends[keep] == ends[keep - 1]:
        keep -= 1
    return keep


def _first(flags: Iterable[bool], default: int) -> int:
    """The index of the first true flag (`default` when there is none), without a Python-level loop."""
    return next(compress(count(), flags), default)


def converted(
    chat: BufferChat | None, rows: Sequence[MessageLike], agent_type: str, *, inner_thoughts_in_kwargs: bool = True
) -> list[dict[str, Any]]:
    """The rows' chat messages, through `chat` when there is one."""
    if chat is None:
        return buffer_messages(rows, agent_type, inner_thoughts_in_kwargs=inner_thoughts_in_kwargs)
    return chat.buffer(rows, agent_type, inner_thoughts_in_kwargs=inner_thoughts_in_kwargs)
