"""The `<directories>` section of the system prompt: the agent's folders and their files, open or closed.

Layout as in Letta 0.16.8, so clients that parse it keep working:

    <directories>
    <file_limits>
    - current_files_open=1
    - max_files_open=5
    </file_limits>
    <directory name="docs">
    <description>...</description>            (when the folder has one)
    <instructions>...</instructions>          (when the folder has them)
    <file status="open" name="docs/a.txt">
    <metadata>
    - read_only=true
    - chars_current=120
    - chars_limit=50000
    </metadata>
    <value>
    [Viewing file start (out of 3 lines)]
    1: ...
    </value>                                  (only while open)
    </file>
    </directory>
    </directories>

React and workflow agents (no core memory) get Letta's older file layout instead: each file is
`<file status="open|closed">` wrapping an element named after the file, with an empty `<description>`, the
metadata, and a `<value>` that is present (empty) even while the file is closed.
"""

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PromptFolder:
    id: str
    name: str
    description: str | None = None
    instructions: str | None = None


@dataclass(frozen=True)
class PromptFile:
    source_id: str
    name: str
    value: str  # what the block shows: "" when closed, else the (truncated) window
    limit: int


def _render_file(file: PromptFile) -> str:
    status = "open" if file.value else "closed"
    value = f"<value>\n{file.value}\n</value>\n" if file.value else ""
    return (
        f'<file status="{status}" name="{file.name}">\n'
        f"<metadata>\n- read_only=true\n- chars_current={len(file.value)}\n- chars_limit={file.limit}\n</metadata>\n"
        f"{value}</file>\n"
    )


def _render_file_nested(file: PromptFile) -> str:
    status = "open" if file.value else "closed"
    return (
        f'<file status="{status}">\n<{file.name}>\n<description>\n\n</description>\n'
        f"<metadata>\n- read_only=true\n- chars_current={len(file.value)}\n- chars_limit={file.limit}\n</metadata>\n"
        f"<value>\n{file.value}\n</value>\n</{file.name}>\n</file>\n"
    )


def render_directories(
    folders: Sequence[PromptFolder], files: Sequence[PromptFile], max_files_open: int, *, nested: bool = False
) -> str:
    """The section with its leading blank line, or "" when the agent has no folders; `nested`: the react and
    workflow agents' file layout."""
    if not folders:
        return ""
    current_open = sum(1 for f in files if f.value)
    parts = [
        "\n\n<directories>\n",
        f"<file_limits>\n- current_files_open={current_open}\n- max_files_open={max_files_open}\n</file_limits>\n",
    ]
    for folder in folders:
        parts.append(f'<directory name="{folder.name}">\n')
        if folder.description:
            parts.append(f"<description>{folder.description}</description>\n")
        if folder.instructions:
            parts.append(f"<instructions>{folder.instructions}</instructions>\n")
        render = _render_file_nested if nested else _render_file
        parts.extend(render(f) for f in files if f.source_id == folder.id)
        parts.append("</directory>\n")
    parts.append("</directories>")
    return "".join(parts)
