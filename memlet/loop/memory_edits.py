"""Pure edits of a memory block's text, behind the built-in memory tools.

Each function takes the block's current value (and whether the block is read-only) and returns the new value,
or raises `MemoryEditError` whose text is exactly what the model sees as the failed tool's return. Loading,
saving, character limits and prompt rebuilding are the caller's job.

The omni `memory` tool is split the same way: `plan_memory_command` validates its arguments and returns one of
the `*Plan` dataclasses saying what to do; the caller performs it (creating, detaching or renaming blocks) and
uses the text edits below for `str_replace` and `insert`.
"""

import re
from dataclasses import dataclass

READ_ONLY_BLOCK_EDIT_ERROR = "Error This block is read-only and cannot be edited."

# Shown above line-numbered block values (Anthropic models); edits that paste it back are rejected.
LINE_NUMBER_WARNING = (
    "# NOTE: The line numbers below (like '1→') are only a reading aid. "
    "Never include line number prefixes in memory edit tool calls."
)

# A line that starts with a display line number such as "12→ ".
LINE_NUMBER_PREFIX = re.compile(r"^[ \t]*\d+→[ \t]*", re.MULTILINE)

MEMORY_PATH_PREFIX = "/memories/"


class MemoryEditError(Exception):
    """A memory tool failed; `str(error)` is the tool return text the model sees."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def unknown_label_error(label: str, available: list[str]) -> MemoryEditError:
    """Error for a label-addressed tool (core_memory_*, memory_replace, ...) naming a block the agent lacks."""
    return MemoryEditError(f"Block field {label} does not exist (available sections = {', '.join(available)})")


def missing_block_error(label: str) -> MemoryEditError:
    """Error for a path-addressed `memory` command whose block does not exist."""
    return MemoryEditError(f"Error: Memory block '{label}' does not exist")


def block_exists_error(label: str) -> MemoryEditError:
    """Error for `memory create` on a label the agent already has."""
    return MemoryEditError(f"Error: Memory block '{label}' already exists")


def ensure_editable(read_only: bool) -> None:
    """Reject any edit of a read-only block."""
    if read_only:
        raise MemoryEditError(READ_ONLY_BLOCK_EDIT_ERROR)


def _reject_line_numbers(text: str, arg_name: str) -> None:
    if LINE_NUMBER_PREFIX.search(text):
        raise MemoryEditError(
            f"{arg_name} contains a line number prefix, which is not allowed. Do not include line numbers "
            "when calling memory tools (line numbers are for display purposes only)."
        )


def _reject_line_number_warning(text: str, arg_name: str) -> None:
    if LINE_NUMBER_WARNING in text:
        raise MemoryEditError(
            f"{arg_name} contains a line number warning, which is not allowed. Do not include line number "
            "information when calling memory tools (line numbers are for display purposes only)."
        )


def reject_line_number_text(text: str, arg_name: str) -> None:
    """Refuse text that carries the display line numbers or their warning banner."""
    _reject_line_numbers(text, arg_name)
    _reject_line_number_warning(text, arg_name)


# -- label-addressed tools ---------------------------------------------------------------------------------


def core_memory_append(value: str, content: str, *, read_only: bool = False) -> str:
    """`core_memory_append`: the content goes on a new line after the current value."""
    ensure_editable(read_only)
    return f"{value}\n{content}"


def core_memory_replace(value: str, label: str, old_content: str, new_content: str, *, read_only: bool = False) -> str:
    """`core_memory_replace`: replace every occurrence of `old_content`; it must occur at least once."""
    ensure_editable(read_only)
    # An empty needle "occurs" everywhere and would splice new_content between every character.
    if not old_content or old_content not in value:
        raise MemoryEditError(f"Old content '{old_content}' not found in memory block '{label}'")
    return value.replace(old_content, new_content)


def memory_replace(value: str, label: str, old_string: str, new_string: str, *, read_only: bool = False) -> str:
    """`memory_replace` (and `memory str_replace`): replace `old_string`, which must occur exactly once.

    Tabs are expanded in the block and both strings before matching, as Letta does.
    """
    ensure_editable(read_only)
    _reject_line_numbers(old_string, "old_string")
    _reject_line_number_warning(old_string, "old_string")
    _reject_line_numbers(new_string, "new_string")
    old_string, new_string, value = old_string.expandtabs(), new_string.expandtabs(), value.expandtabs()
    if not old_string and not value:
        return new_string  # an empty block holds the empty string exactly once: Letta fills it so
    starts = _occurrences(value, old_string)
    if not starts:
        raise MemoryEditError(
            f"No replacement was performed, old_string `{old_string}` did not appear verbatim in memory "
            f"block with label `{label}`."
        )
    if len(starts) > 1:
        lines = sorted({value.count("\n", 0, start) + 1 for start in starts})
        raise MemoryEditError(
            f"No replacement was performed. Multiple occurrences of old_string `{old_string}` in lines "
            f"{lines}. Please ensure it is unique."
        )
    return value.replace(old_string, new_string)


def _occurrences(haystack: str, needle: str) -> list[int]:
    """Start offsets of the non-overlapping occurrences of `needle` (none for an empty needle)."""
    if not needle:
        return []
    found: list[int] = []
    start = haystack.find(needle)
    while start != -1:
        found.append(start)
        start = haystack.find(needle, start + len(needle))
    return found


def memory_insert(
    value: str,
    new_string: str,
    insert_line: int | None = -1,
    *,
    read_only: bool = False,
    arg_name: str = "new_string",
) -> str:
    """`memory_insert` (and `memory insert`): insert text as whole lines.

    `insert_line` 0 puts the text at the top, N after line N, -1 (or None) at the end. `arg_name` names the
    text parameter in errors ("insert_text" for the omni tool).
    """
    ensure_editable(read_only)
    _reject_line_numbers(new_string, arg_name)
    _reject_line_number_warning(new_string, arg_name)
    value, new_string = value.expandtabs(), new_string.expandtabs()
    lines = value.split("\n")
    n_lines = len(lines)
    if insert_line is None or insert_line == -1:
        insert_line = n_lines
    elif insert_line < 0 or insert_line > n_lines:
        raise MemoryEditError(
            f"Invalid `insert_line` parameter: {insert_line}. It should be within the range of lines of the "
            f"memory block: {[0, n_lines]}, or -1 to append to the end of the memory block."
        )
    if not value:
        # An empty block is one empty line; keep the inserted text from gaining a stray blank line.
        return new_string
    return "\n".join(lines[:insert_line] + new_string.split("\n") + lines[insert_line:])


def memory_rethink(new_memory: str, *, read_only: bool = False) -> str:
    """`memory_rethink`: the whole value is replaced by `new_memory`."""
    ensure_editable(read_only)
    _reject_line_numbers(new_memory, "new_memory")
    _reject_line_number_warning(new_memory, "new_memory")
    return new_memory


# -- the omni `memory` tool --------------------------------------------------------------------------------


def label_from_path(path: str, *, flatten: bool = False) -> str:
    """`/memories/<label>` (or `/<label>`, or a bare label) to the block label.

    With `flatten`, a nested path's slashes become underscores, as Letta reads the path of insert, delete and
    rename (create and str_replace keep them).
    """
    label = path.removeprefix(MEMORY_PATH_PREFIX).removeprefix("/")
    return label.replace("/", "_") if flatten else label


@dataclass(frozen=True)
class CreatePlan:
    """Create a block with this label, description and value, and attach it to the agent."""

    label: str
    description: str
    value: str


@dataclass(frozen=True)
class StrReplacePlan:
    """Apply `memory_replace(value, label, old_string, new_string)` to the block."""

    label: str
    old_string: str
    new_string: str


@dataclass(frozen=True)
class InsertPlan:
    """Apply `memory_insert(value, insert_text, insert_line, arg_name="insert_text")` to the block."""

    label: str
    insert_text: str
    insert_line: int


@dataclass(frozen=True)
class DeletePlan:
    """Detach the block from the agent."""

    label: str


@dataclass(frozen=True)
class RenamePlan:
    """Change the block's label."""

    old_label: str
    new_label: str


@dataclass(frozen=True)
class DescribePlan:
    """Change the block's description."""

    label: str
    description: str


MemoryPlan = CreatePlan | StrReplacePlan | InsertPlan | DeletePlan | RenamePlan | DescribePlan


def plan_memory_command(
    command: str,
    *,
    path: str | None = None,
    file_text: str | None = None,
    description: str | None = None,
    old_string: str | None = None,
    new_string: str | None = None,
    insert_line: int | None = None,
    insert_text: str | None = None,
    old_path: str | None = None,
    new_path: str | None = None,
) -> MemoryPlan:
    """Check the `memory` tool's arguments for `command` and say what to do; raise on missing arguments."""
    if command == "create":
        _require(path, "path", command)
        _require(description, "description", command)
        return CreatePlan(label_from_path(path or ""), description or "", file_text or "")
    if command == "str_replace":
        _require(path, "path", command)
        _require(old_string, "old_string", command)
        _require(new_string, "new_string", command)
        return StrReplacePlan(label_from_path(path or ""), old_string or "", new_string or "")
    if command == "insert":
        _require(path, "path", command)
        _require(insert_text, "insert_text", command)
        # Letta crashes on a missing insert_line; appending is what the tool's docs promise.
        line = -1 if insert_line is None else insert_line
        return InsertPlan(label_from_path(path or "", flatten=True), insert_text or "", line)
    if command == "delete":
        _require(path, "path", command)
        return DeletePlan(label_from_path(path or "", flatten=True))
    if command == "rename":
        if path and description:
            return DescribePlan(label_from_path(path, flatten=True), description)
        if old_path and new_path:
            return RenamePlan(label_from_path(old_path, flatten=True), label_from_path(new_path, flatten=True))
        raise MemoryEditError(
            "Error: path and description are required for update_description command, or old_path and "
            "new_path are required for rename command"
        )
    raise MemoryEditError(
        f"Error: Unknown command '{command}'. Supported commands: create, str_replace, insert, delete, rename"
    )


def _require(arg: str | None, name: str, command: str) -> None:
    if arg is None:
        raise MemoryEditError(f"Error: {name} is required for {command} command")


def plan_result(plan: MemoryPlan) -> str:
    """The tool return for a create/delete/rename/describe plan once the caller has carried it out (Letta's)."""
    recompiled = "Your system prompt has been recompiled with"
    if isinstance(plan, CreatePlan):
        return (
            f"Successfully created memory block '{plan.label}'. "
            f"{recompiled} the new memory block and is now active in your context."
        )
    if isinstance(plan, DeletePlan):
        return (
            f"Successfully deleted memory block '{plan.label}'. "
            "Your system prompt has been recompiled without this memory block and is now active in your context."
        )
    if isinstance(plan, RenamePlan):
        return (
            f"Successfully renamed memory block '{plan.old_label}' to '{plan.new_label}'. "
            f"{recompiled} the renamed memory block and is now active in your context."
        )
    if isinstance(plan, DescribePlan):
        return (
            f"Successfully updated description of memory block '{plan.label}'. "
            f"{recompiled} the updated description and is now active in your context."
        )
    raise TypeError(f"{type(plan).__name__} returns the edited block value, not a summary")
