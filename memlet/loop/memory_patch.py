"""`memory_apply_patch`: a simplified unified diff applied to one block, or `***`-headed operations on several.

Pure: `parse_operations` turns the patch into operations and `apply_hunks` edits a value; the built-in tool
(`builtin_tools.memory_apply_patch`) carries them out on the step's blocks. The format is Letta's:

- no `***` header: the whole patch is a diff for the block named by `label`;
- `*** Add Block: <label>`, then an optional `Description: <text>` line and `+` content lines;
- `*** Delete Block: <label>`;
- `*** Update Block: <label>`, then a diff body;
- `*** Move to: <new label>` renames the block named by the header before it.

A diff body is lines starting with " " (kept), "-" (removed) or "+" (added); `@@` lines separate hunks, and each
hunk's kept-and-removed lines must occur exactly once in the current value. A blank line counts as an empty
kept line; `---`/`+++` file headers and other lines are ignored. Tabs are expanded before matching.
"""

from dataclasses import dataclass, field

from memlet.loop.memory_edits import MemoryEditError, reject_line_number_text

_ADD, _DELETE, _UPDATE, _MOVE = "*** Add Block:", "*** Delete Block:", "*** Update Block:", "*** Move to:"
_HEADERS = (_ADD, _DELETE, _UPDATE, _MOVE)


@dataclass
class PatchOperation:
    """One operation of a multi-block patch: kind is add, delete, update or rename."""

    kind: str
    label: str
    new_label: str = ""
    description: str = ""
    lines: list[str] = field(default_factory=list)  # add: the content; update: the diff body


def is_multi_block(patch: str) -> bool:
    return any(line.startswith(_HEADERS) for line in patch.splitlines())


def _hunks(body: str) -> list[list[str]]:
    hunks: list[list[str]] = [[]]
    for line in body.splitlines():
        if line.startswith(("***", "---", "+++")):
            continue
        if line.startswith("@@"):
            hunks.append([])
        elif line.startswith((" ", "-", "+")):
            hunks[-1].append(line)
        elif not line.strip():
            hunks[-1].append(" ")
    return [h for h in hunks if h]


def _positions(lines: list[str], wanted: list[str]) -> list[int]:
    size = len(wanted)
    return [i for i in range(len(lines) - size + 1) if lines[i : i + size] == wanted]


def apply_hunks(value: str, body: str) -> str:
    """`value` with every hunk of the diff `body` applied in order; raises MemoryEditError when one does not fit."""
    lines = value.expandtabs().split("\n")
    hunks = _hunks(body.expandtabs())
    if not hunks:
        raise MemoryEditError("The patch has no hunks: every diff line must start with ' ', '-' or '+'.")
    for hunk in hunks:
        before = [line[1:] for line in hunk if line[0] in " -"]
        after = [line[1:] for line in hunk if line[0] in " +"]
        if not before:
            lines += after  # no context at all: append
            continue
        found = _positions(lines, before)
        if not found:
            preview = "\n".join(before[:4])
            raise MemoryEditError(
                "The patch does not apply: these lines were not found in the memory block (add context that "
                f"matches the block exactly):\n{preview}"
            )
        if len(found) > 1:
            raise MemoryEditError(
                "The patch does not apply: its context matches several places in the memory block; include "
                "more surrounding lines so that it matches only one."
            )
        start = found[0]
        lines[start : start + len(before)] = after
    return "\n".join(lines)


def _header_label(line: str, header: str) -> str:
    label = line[len(header) :].strip()
    if not label:
        raise MemoryEditError(f"'{header}' needs a block label after it.")
    return label


def parse_operations(patch: str) -> list[PatchOperation]:
    """The operations of a multi-block patch, in order; raises MemoryEditError on a malformed header."""
    operations: list[PatchOperation] = []
    current: PatchOperation | None = None  # the add/update whose body lines follow
    last_label: str | None = None
    lines = patch.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line.startswith((_ADD, _UPDATE)):
            kind = "add" if line.startswith(_ADD) else "update"
            current = PatchOperation(kind, _header_label(line, _ADD if kind == "add" else _UPDATE))
            operations.append(current)
            last_label = current.label
            if kind == "add" and index < len(lines) and lines[index].startswith("Description:"):
                current.description = lines[index].split(":", 1)[1].strip()
                index += 1
        elif line.startswith(_DELETE):
            current = None
            operations.append(PatchOperation("delete", _header_label(line, _DELETE)))
            last_label = operations[-1].label
        elif line.startswith(_MOVE):
            new_label = _header_label(line, _MOVE)
            if last_label is None:
                raise MemoryEditError(f"'{_MOVE}' must come after an Add, Update or Delete Block header.")
            operations.append(PatchOperation("rename", last_label, new_label=new_label))
            last_label = new_label
        elif current is not None and current.kind == "update":
            current.lines.append(line)
        elif current is not None and (line.startswith("+") or not line.strip()):
            current.lines.append(line[1:] if line.startswith("+") else "")
    if not operations:
        raise MemoryEditError("The patch has no operations: use Add Block, Delete Block or Update Block headers.")
    return operations


def check_patch(patch: str) -> str:
    """The patch with tabs expanded, after refusing the line-number prefixes and banner shown in the prompt."""
    reject_line_number_text(patch, "patch")
    return patch.expandtabs()
