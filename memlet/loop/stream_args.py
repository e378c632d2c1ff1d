"""Incremental reading of streamed tool-call arguments (a JSON object arriving in arbitrary fragments).

`ArgumentSplitter` pulls the decoded text of chosen string members (e.g. `thinking`, `message`) out of the
object as it arrives, and passes the rest of the object through as JSON text without those members. Pure: no
I/O, no knowledge of agents or tools; `DeltaLabels` (llm_call.py) decides what each piece is shown as.
"""

import json
from collections.abc import Collection
from dataclasses import dataclass
from enum import Enum, auto

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_WHITESPACE = " \t\r\n"


@dataclass(frozen=True)
class Piece:
    """Decoded text of the member `field`, or (field None) a fragment of the remaining object's JSON text."""

    field: str | None
    text: str


class _S(Enum):
    START = auto()
    BEFORE_KEY = auto()
    KEY = auto()
    BEFORE_COLON = auto()
    BEFORE_VALUE = auto()
    FIELD_STRING = auto()
    RAW_VALUE = auto()
    AFTER_VALUE = auto()
    PASSTHROUGH = auto()
    DONE = auto()


class ArgumentSplitter:
    """Feed argument fragments; get back the pieces they complete.

    Members named in `fields` whose value is a JSON string come out decoded (escapes such as ``\\n``, ``\\"``,
    ``\\\\`` and ``\\uXXXX``, surrogate pairs included, may be split anywhere across fragments). Every other
    member is passed through verbatim as ``{"key": value, ...}`` text, except members named in `drop`, which
    are left out whatever their value; the opening brace is held back until the first member passed through,
    so an object made only of extracted members yields ``{}`` at its end. Text that is not a JSON object passes
    through unchanged. A field member whose value is not a string is passed through too.
    """

    def __init__(self, fields: Collection[str], drop: Collection[str] = ()) -> None:
        self.fields = frozenset(fields)
        self.drop = frozenset(drop)
        self._dropping = False
        self._state = _S.START
        self._out: list[Piece] = []
        self._key_raw = ""
        self._key_escape = False
        self._key = ""
        self._rest_members = 0
        self._rest_open = False
        # inside an extracted string
        self._escape: str | None = None  # None, "" after a backslash, or the hex digits read after \u
        self._high_surrogate: str | None = None
        # inside a passed-through value
        self._depth = 0
        self._in_string = False
        self._string_escape = False
        self._scalar = False
        self.completed: dict[str, str] = {}
        """Extracted members whose string has ended, with their full decoded value."""
        self._current = ""

    @property
    def done(self) -> bool:
        """Whether the object's closing brace has been read."""
        return self._state is _S.DONE

    @property
    def open_field(self) -> str | None:
        """The extracted member whose string is being read right now, if any."""
        return self._key if self._state is _S.FIELD_STRING else None

    def feed(self, chunk: str) -> list[Piece]:
        """Read one fragment; return the pieces it yields, adjacent pieces of the same kind merged."""
        for char in chunk:
            self._step(char)
        out, self._out = self._out, []
        merged: list[Piece] = []
        for piece in out:
            if merged and merged[-1].field == piece.field:
                merged[-1] = Piece(piece.field, merged[-1].text + piece.text)
            elif piece.text:
                merged.append(piece)
        return merged

    # --- output -------------------------------------------------------------------------------------------

    def _emit(self, field: str | None, text: str) -> None:
        if field is not None:
            self._current += text
        self._out.append(Piece(field, text))

    def _rest(self, text: str) -> None:
        self._out.append(Piece(None, text))

    def _raw(self, text: str) -> None:
        if not self._dropping:
            self._rest(text)

    def _open_rest_member(self) -> None:
        prefix = ", " if self._rest_members else ("" if self._rest_open else "{")
        self._rest_open = True
        self._rest_members += 1
        self._rest(f'{prefix}"{self._key_raw}": ')

    def _close_object(self) -> None:
        self._rest("}" if self._rest_open else "{}")
        self._state = _S.DONE

    # --- the state machine --------------------------------------------------------------------------------

    def _step(self, char: str) -> None:
        state = self._state
        if state is _S.PASSTHROUGH:
            self._rest(char)
        elif state is _S.START:
            if char == "{":
                self._state = _S.BEFORE_KEY
            elif char not in _WHITESPACE:
                self._state = _S.PASSTHROUGH
                self._rest(char)
        elif state is _S.BEFORE_KEY:
            if char == '"':
                self._key_raw, self._key_escape, self._state = "", False, _S.KEY
            elif char == "}":
                self._close_object()
        elif state is _S.KEY:
            self._read_key(char)
        elif state is _S.BEFORE_COLON:
            if char == ":":
                self._state = _S.BEFORE_VALUE
        elif state is _S.BEFORE_VALUE:
            self._start_value(char)
        elif state is _S.FIELD_STRING:
            self._read_field(char)
        elif state is _S.RAW_VALUE:
            self._read_raw(char)
        elif state is _S.AFTER_VALUE:
            self._after_value(char)

    def _read_key(self, char: str) -> None:
        if char == '"' and not self._key_escape:
            try:
                self._key = str(json.loads(f'"{self._key_raw}"', strict=False))
            except ValueError:
                self._key = self._key_raw
            self._state = _S.BEFORE_COLON
            return
        self._key_escape = char == "\\" and not self._key_escape
        self._key_raw += char

    def _start_value(self, char: str) -> None:
        if char in _WHITESPACE:
            return
        if char == '"' and self._key in self.fields:
            self._state, self._escape, self._current = _S.FIELD_STRING, None, ""
            return
        self._dropping = self._key in self.drop
        if not self._dropping:
            self._open_rest_member()
        self._raw(char)
        self._depth = 1 if char in "{[" else 0
        self._in_string = char == '"'
        self._string_escape = False
        self._scalar = char not in '{["'
        self._state = _S.RAW_VALUE

    def _read_raw(self, char: str) -> None:
        if self._in_string:
            self._raw(char)
            if self._string_escape:
                self._string_escape = False
            elif char == "\\":
                self._string_escape = True
            elif char == '"':
                self._in_string = False
                if self._depth == 0:
                    self._state = _S.AFTER_VALUE
            return
        if self._scalar:
            if char in _WHITESPACE or char in ",}":
                self._state = _S.AFTER_VALUE
                self._after_value(char)
            else:
                self._raw(char)
            return
        self._raw(char)
        if char == '"':
            self._in_string = True
        elif char in "{[":
            self._depth += 1
        elif char in "}]":
            self._depth -= 1
            if self._depth == 0:
                self._state = _S.AFTER_VALUE

    def _after_value(self, char: str) -> None:
        if char == ",":
            self._state = _S.BEFORE_KEY
        elif char == "}":
            self._close_object()

    def _read_field(self, char: str) -> None:
        field = self._key
        if self._escape is None:
            if char == "\\":
                self._escape = ""
            elif char == '"':
                self._flush_surrogate()
                self.completed[field] = self._current
                self._state = _S.AFTER_VALUE
            else:
                self._flush_surrogate()
                self._emit(field, char)
            return
        if self._escape == "":
            if char == "u":
                self._escape = "u"
                return
            self._escape = None
            self._flush_surrogate()
            self._emit(field, _ESCAPES.get(char, char))
            return
        self._escape += char
        if len(self._escape) < 5:  # "u" and four hex digits
            return
        code = int(self._escape[1:], 16)
        self._escape = None
        if 0xD800 <= code < 0xDC00:
            self._flush_surrogate()
            self._high_surrogate = chr(code)  # wait for its low half, which may be in the next fragment
        elif 0xDC00 <= code < 0xE000 and self._high_surrogate is not None:
            high = ord(self._high_surrogate)
            self._high_surrogate = None
            self._emit(field, chr(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)))
        else:
            self._flush_surrogate()
            self._emit(field, chr(code))

    def _flush_surrogate(self) -> None:
        # A high surrogate not followed by its low half stays a lone surrogate, as json.loads leaves it.
        if self._high_surrogate is not None:
            self._emit(self._key, self._high_surrogate)
            self._high_surrogate = None
