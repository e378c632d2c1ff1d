"""Small SQL helpers shared by the repositories."""


def escape_like(text: str) -> str:
    """`text` with LIKE's wildcards and escape character escaped (use with ``escape="\\\\"``)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
