"""The request-scoped `<available_skills>` section: skills a client announced (`client_skills`) plus the agent's
`skills/<name>` blocks, appended to the system prompt of one LLM request and never stored.

As in Letta, entries are grouped under the directory that holds each skill's folder and drawn as a tree:

    <available_skills>
    /home/me/.letta/skills
    ├── commit/
    │   └── SKILL.md (Write a commit message)
    └── review/
        └── SKILL.md (Review a diff)
    </available_skills>

A skill block's location is `${MEMORY_DIR}/skills/<name>/SKILL.md`; a block skill shadows a client skill of the
same name. Only a description's first line is shown.
"""

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

BLOCK_PREFIX = "skills/"
MEMORY_SKILLS = "${MEMORY_DIR}/skills"

_Tree = dict[str, "_Tree | str"]


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0].strip() if lines else ""


def _block_skills(blocks: Iterable[Any]) -> list[tuple[str, str, str]]:
    """The agent's skill blocks; of `skills/x` and `skills/x/SKILL`, the first attached is the one shown."""
    found: list[tuple[str, str, str]] = []
    for block in blocks:
        parts = str(getattr(block, "label", "") or "").split("/")
        if parts[0] + "/" != BLOCK_PREFIX or len(parts) < 2 or not parts[1]:
            continue
        if (len(parts) == 2 or (len(parts) == 3 and parts[2] == "SKILL")) and parts[1] not in {f[0] for f in found}:
            name = parts[1]
            found.append((name, _first_line(getattr(block, "description", None)), f"{MEMORY_SKILLS}/{name}/SKILL.md"))
    return found


def _split(name: str, location: str) -> tuple[str, str]:
    """(root directory, path below it): a `<root>/<name>/SKILL.md` keeps its folder, anything else its file."""
    location = location.strip()
    folder = posixpath.dirname(location)
    if location.endswith("/SKILL.md") and posixpath.basename(folder) == name.split("/")[-1]:
        return posixpath.dirname(folder), f"{posixpath.basename(folder)}/SKILL.md"
    return folder, posixpath.basename(location)


def _draw(tree: _Tree, prefix: str, out: list[str]) -> None:
    folders = sorted(k for k, v in tree.items() if isinstance(v, dict))
    files = sorted(k for k, v in tree.items() if isinstance(v, str))
    entries = [*folders, *files]
    for i, key in enumerate(entries):
        last = i == len(entries) - 1
        node = tree[key]
        branch = "└── " if last else "├── "
        if isinstance(node, dict):
            out.append(f"{prefix}{branch}{key}/")
            _draw(node, prefix + ("    " if last else "│   "), out)
        else:
            out.append(f"{prefix}{branch}{key}{f' ({node})' if node else ''}")


def available_skills(blocks: Iterable[Any], client_skills: Sequence[Mapping[str, Any]]) -> str:
    """The `<available_skills>` section, or "" when there is no skill."""
    entries = _block_skills(blocks)
    seen = {name for name, _, _ in entries}
    for skill in client_skills:
        name = str(skill.get("name") or "")
        if not name or name in seen:
            continue
        seen.add(name)
        location = str(skill.get("location") or "").strip() or f"{MEMORY_SKILLS}/{name}/SKILL.md"
        entries.append((name, _first_line(skill.get("description")), location))
    if not entries:
        return ""
    roots: dict[str, _Tree] = {}
    for name, description, location in entries:
        root, below = _split(name, location)
        node = roots.setdefault(root, {})
        *folders, leaf = [p for p in below.split("/") if p] or [below]
        for folder in folders:
            child = node.setdefault(folder, {})
            node = child if isinstance(child, dict) else node
        node[leaf] = description
    out = ["<available_skills>"]
    for i, root in enumerate(sorted(roots)):
        if i:
            out.append("")
        out.append(root)
        _draw(roots[root], "", out)
    out.append("</available_skills>")
    return "\n".join(out)


def with_skills(system_text: str, blocks: Iterable[Any], client_skills: Sequence[Mapping[str, Any]]) -> str:
    """The system prompt of one request: the stored text, then the skills section when there is one."""
    section = available_skills(blocks, client_skills)
    if not section:
        return system_text
    return system_text.rstrip("\n") + "\n\n" + section  # only newlines trimmed: trailing spaces stay, as in Letta
