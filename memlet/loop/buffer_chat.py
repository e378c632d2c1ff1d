"""One conversion of a turn's buffer to chat messages, shared by the compaction checks and the requests of its
steps (each converted the whole buffer before, and the cost grows with the agent's history); and each message's
request form with its encoded JSON, so a step's size checks and its request body touch only the new messages.
Each message's token count is kept the same way, once a step has to count them (a prompt past what its size alone
proves fits): each later count digests only the new messages.
"""

import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import compress, count, repeat
from typing import Any

import orjson

from memlet.db.message_row import MessageLike, MessageRow
from memlet.llm.anthropic_format import ANTHROPIC_ONLY_KEYS
from memlet.llm.chat_format import buffer_messages, is_v2, request_form
from memlet.llm.openai_http import encode_json
from memlet.llm.tokens import message_tokens, total_message_tokens


@dataclass
class Wire:
    """A conversion's messages in one request form (`request_form`: the system role, the tool-return cap), each
    with its compact JSON (as `orjson.Fragment`s, which the body splices in), that JSON's length and, once counted,
    its tokens. Another form than the messages' own (`base`: the same conversion's wire in their own form) takes
    the JSON and count of every message the form left as it was from `base`."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    fragments: list[orjson.Fragment] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    thinking: list[bool] = field(default_factory=list)  # which messages carry keys only Anthropic reads
    counts: list[int] = field(default_factory=list)  # the first messages' token counts, as far as counted
    base: "Wire | None" = None

    def json_length(self, head: bytes | None = None) -> int:
        """The length of the messages' JSON array, `[m1,m2,...]`, or `[head,m1,m2,...]` with the JSON of a message
        sent before them (the system prompt)."""
        parts = len(self.lengths) + (head is not None)
        return sum(self.lengths) + (len(head) if head is not None else 0) + max(parts - 1, 0) + 2

    def tokens(self, *head: dict[str, Any]) -> int:
        """`count_message_tokens([*head, *messages])` (`head`: messages sent before them, the system prompt), counting
        only the messages no earlier call counted."""
        if (done := len(self.counts)) < len(self.messages):
            base = self.base
            if base is None:
                self.counts.extend(map(message_tokens, self.messages[done:]))
            else:
                base.tokens()
                shared = base.messages
                for i, message in enumerate(self.messages[done:], done):
                    same = i < len(shared) and message is shared[i]
                    self.counts.append(base.counts[i] if same else message_tokens(message))
        return total_message_tokens([*map(message_tokens, head), *self.counts] if head else self.counts)

    def any_thinking(self) -> bool:
        return any(self.thinking)

    def _extend(self, messages: Sequence[dict[str, Any]], system_role: str, tool_return_limit: int | None) -> int:
        """Append `messages` (the conversion's, from this wire's length on) in this form; how many were encoded."""
        shared = self.base.messages if self.base is not None else ()
        encoded_count = 0
        for i, message in enumerate(messages, len(self.messages)):
            form = request_form(message, system_role, tool_return_limit)
            if form is message and i < len(shared):  # unchanged by this form: `base` holds its JSON
                assert self.base is not None
                fragment, length = self.base.fragments[i], self.base.lengths[i]
            else:
                # A copy of exact size: orjson's own result keeps the whole buffer it reserved (4 KB at least).
                encoded = bytes(memoryview(encode_json(form)))
                fragment, length = orjson.Fragment(encoded), len(encoded)
                encoded_count += 1
            self.messages.append(form)
            self.fragments.append(fragment)
            self.lengths.append(length)
            self.thinking.append(any(key in form for key in ANTHROPIC_ONLY_KEYS))
        return encoded_count

    def _head(self, n: int) -> "Wire":
        return Wire(self.messages[:n], self.fragments[:n], self.lengths[:n], self.thinking[:n], self.counts[:n])


WireKey = tuple[str, int | None]  # (system role, tool-return cap)
OWN_FORM: WireKey = ("system", None)  # the messages as converted


@dataclass
class _Conversion:
    rows: tuple[MessageLike, ...]
    messages: list[dict[str, Any]]
    ends: list[int]  # len(messages) after each row
    wires: dict[WireKey, Wire] = field(default_factory=dict)


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
        self._last: dict[tuple[str, bool, bool, bool], _Conversion] = {}
        self.conversions = 0  # how many times rows were converted (for tests)
        self.rows_converted = 0  # how many rows those conversions converted (for tests)
        self.messages_encoded = 0  # how many request-form messages were encoded (for tests)

    def buffer(
        self,
        rows: Sequence[MessageLike],
        agent_type: str,
        *,
        inner_thoughts_in_kwargs: bool = True,
        scrub_thoughts: bool = False,
        echo_reasoning: bool = False,
    ) -> list[dict[str, Any]]:
        """`buffer_messages(rows, ...)`; the caller must not modify the list or its messages."""
        return self._conversion(rows, agent_type, inner_thoughts_in_kwargs, scrub_thoughts, echo_reasoning).messages

    def wire(
        self,
        rows: Sequence[MessageLike],
        agent_type: str,
        *,
        inner_thoughts_in_kwargs: bool = True,
        scrub_thoughts: bool = False,
        echo_reasoning: bool = False,
        system_role: str = "system",
        tool_return_limit: int | None = None,
    ) -> Wire:
        """The buffer's messages in a request's form, each with its JSON: encoded once per message, kept with the
        conversion and reused by the next ones for the messages they share. The caller must not modify it."""
        conversion = self._conversion(rows, agent_type, inner_thoughts_in_kwargs, scrub_thoughts, echo_reasoning)
        key = (system_role, tool_return_limit)
        wire = conversion.wires.setdefault(key, Wire())
        wire.base = conversion.wires.get(OWN_FORM) if key != OWN_FORM else None
        if (done := len(wire.messages)) < len(conversion.messages):
            self.messages_encoded += wire._extend(conversion.messages[done:], system_role, tool_return_limit)
        return wire

    def _conversion(
        self,
        rows: Sequence[MessageLike],
        agent_type: str,
        inner_thoughts_in_kwargs: bool,
        scrub_thoughts: bool,
        echo_reasoning: bool,
    ) -> _Conversion:
        # The thoughts-in-kwargs flag only changes a V2 agent's messages.
        key = (agent_type, is_v2(agent_type) and inner_thoughts_in_kwargs, scrub_thoughts, echo_reasoning)
        last = self._last.get(key)
        if last is not None and len(rows) == len(last.rows) and all(map(operator.is_, rows, last.rows)):
            return last
        keep = 0 if last is None else _reusable(last, rows)
        ends = last.ends[:keep] if last is not None else []
        before = last.messages[: ends[-1]] if last is not None and keep else []
        messages = buffer_messages(
            rows[keep:],
            agent_type,
            inner_thoughts_in_kwargs=key[1],
            scrub_thoughts=scrub_thoughts,
            echo_reasoning=echo_reasoning,
            before=before,
            ends=ends,
        )
        conversion = _Conversion(tuple(rows), messages, ends)
        if last is not None and before:
            # The messages both conversions hold (the last one of `before` may have been replaced by a merge).
            shared = len(before) if messages[len(before) - 1] is before[-1] else len(before) - 1
            conversion.wires = {k: wire._head(shared) for k, wire in last.wires.items()}
        self._last[key] = conversion
        self.conversions += 1
        self.rows_converted += len(rows) - keep
        return conversion


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
    chat: BufferChat | None,
    rows: Sequence[MessageLike],
    agent_type: str,
    *,
    inner_thoughts_in_kwargs: bool = True,
    scrub_thoughts: bool = False,
    echo_reasoning: bool = False,
) -> list[dict[str, Any]]:
    """The rows' chat messages, through `chat` when there is one."""
    convert = buffer_messages if chat is None else chat.buffer
    return convert(
        rows,
        agent_type,
        inner_thoughts_in_kwargs=inner_thoughts_in_kwargs,
        scrub_thoughts=scrub_thoughts,
        echo_reasoning=echo_reasoning,
    )
