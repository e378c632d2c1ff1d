"""Small SQL helpers shared by the repositories."""

import re
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def storable_text(text: str) -> str:
    """`text` as Postgres can store it: NULs dropped, lone surrogates (not encodable as UTF-8) as U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text.replace("\x00", ""))


def escape_like(text: str) -> str:
    """`text` with LIKE's wildcards and escape character escaped (use with ``escape="\\\\"``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def storable_value(value: Any) -> Any:
    """A decoded JSON value with `storable_text` applied to every string in it, keys included."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, dict):
        return {storable_value(k): storable_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [storable_value(v) for v in value]
    return value
