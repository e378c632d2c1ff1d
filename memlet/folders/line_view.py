"""A file's text as the numbered lines an agent sees in its file blocks, `open_files` and `grep_files`.

Like Letta 0.16.8: code keeps indentation, other text is stripped, blank lines are dropped, Markdown is split
into sentences; lines are numbered from 1 (`"12: text"`), and a header line tells which part is shown:
`[Viewing file start (out of N lines)]`, `[Viewing lines 3 to 10 (out of N lines)]`.
"""

import re

from memlet.folders.file_types import LineStrategy, line_strategy

TRUNCATED_NOTE = "...[TRUNCATED]\n# NOTE: This file view is truncated; open the file with an offset to see the rest."
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


class LineRangeError(ValueError):
    """The requested window lies outside the file; the message is what the model sees."""


def split_lines(text: str, strategy: LineStrategy) -> list[str]:
    if strategy is LineStrategy.DOCUMENTATION:
        sentences = (re.sub(r"\s+", " ", s.strip()) for s in _SENTENCE_BREAK.split(text.strip()))
        return [s for s in sentences if s]
    if strategy is LineStrategy.CODE:
        return [line.rstrip() for line in text.splitlines() if line.strip()]
    return [line.strip() for line in text.splitlines() if line.strip()]


def file_lines(text: str, media_type: str | None, file_name: str) -> tuple[list[str], str]:
    """The file's lines and what they are called ("lines" or "sentences")."""
    strategy = line_strategy(media_type, file_name)
    unit = "sentences" if strategy is LineStrategy.DOCUMENTATION else "lines"
    return split_lines(text, strategy), unit


def numbered(lines: list[str], first: int = 1) -> list[str]:
    return [f"{number}: {line}" for number, line in enumerate(lines, start=first)]


def window(text: str, media_type: str | None, file_name: str, start: int | None = None, end: int | None = None) -> str:
    """The numbered view of lines [start, end) (0-based, end exclusive; None = from the top / to the end)."""
    lines, unit = file_lines(text, media_type, file_name)
    total = len(lines)
    if start is not None and end is not None and start >= end:
        raise LineRangeError(f"Invalid range: start ({start}) must be less than end ({end})")
    if start is not None and start >= total:
        raise LineRangeError(
            f"File {file_name} has only {total} {unit}, but requested offset {start + 1} is out of range"
        )
    first = start or 0
    shown = numbered(lines[first : min(end, total) if end is not None else None], first + 1)
    if start is None and end is None:
        header = f"[Viewing file start (out of {total} {unit})]"
    elif end is None:
        header = f"[Viewing {unit} {first + 1} to end (out of {total} {unit})]"
    else:
        header = f"[Viewing {unit} {first + 1} to {min(end, total)} (out of {total} {unit})]"
    return "\n".join([header, *shown])


def truncate_view(value: str | None, is_open: bool, limit: int) -> str:
    """What a file block shows: nothing when closed, else the view cut to `limit` characters with a note."""
    shown = value if value and is_open else ""
    if len(shown) > limit:
        keep = max(limit - len(TRUNCATED_NOTE), 0)
        shown = shown[:keep] + TRUNCATED_NOTE
    return shown


DEFAULT_MAX_FILES_OPEN = 5
DEFAULT_FILE_VIEW_WINDOW_CHARS = 50_000


def file_defaults_for_context_window(context_window: int | None) -> tuple[int, int]:
    """(max_files_open, per_file_view_window_char_limit) Letta picks for a model with this context window."""
    if not context_window:
        return DEFAULT_MAX_FILES_OPEN, DEFAULT_FILE_VIEW_WINDOW_CHARS
    # Roughly four characters a token: bigger windows may hold more open files and longer views of each.
    for ceiling, max_files, char_limit in ((8_000, 3, 5_000), (32_000, 5, 15_000), (128_000, 10, 25_000)):
        if context_window <= ceiling:
            return max_files, char_limit
    return (10, 40_000) if context_window <= 200_000 else (15, 40_000)
