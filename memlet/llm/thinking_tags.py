"""The `<thinking>` tags of a reply Letta prefilled with one, taken out of its text as Letta takes them out.

Letta starts some Claude replies with ``<thinking>`` (see `anthropic_format.prefilled`); the model goes on with its
thoughts, closes the tag, then calls a tool. The text becomes the reasoning shown to the user without the tags:
``<thinking...>`` and ``</thinking>`` are removed wherever they are. Streamed text is cleaned the same way: a
fragment that may be the start of a tag is held back until the next one shows whether it is.
"""

import re

TAGS = re.compile(r"<thinking.*?>|</thinking>")
_CLOSE = "</thinking>"
_OPEN = "<thinking"


def strip_tags(text: str) -> str:
    return TAGS.sub("", text)


def _maybe_tag(tail: str) -> bool:
    """Whether `tail` (from a `<` to the end) may still become a tag."""
    if _CLOSE.startswith(tail) or _OPEN.startswith(tail):
        return True
    return tail.startswith(_OPEN) and ">" not in tail and "\n" not in tail


class TagStripper:
    """Streamed text without the tags; `flush` gives what was held back at the end of the block."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        cleaned = strip_tags(self._held + text)
        start = cleaned.rfind("<")
        cut = start if start >= 0 and _maybe_tag(cleaned[start:]) else len(cleaned)
        self._held = cleaned[cut:]
        return cleaned[:cut]

    def flush(self) -> str:
        held, self._held = self._held, ""
        return held
