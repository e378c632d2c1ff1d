"""Small SQL helpers shared by the repositories."""

import re

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def storable_text(text: str) -> str:
    """`text` as Postgres can store it: NULs dropped, lone surrogates (not encodable as UTF-8) as U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text.replace("\x00", ""))


def escape_like(text: str) -> str:
    """`text` with LIKE's wildcards and escape character escaped (use with ``escape="\\\\"``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
