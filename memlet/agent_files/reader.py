"""Read an uploaded agent file: JSON (double-encoded accepted), legacy or v2, into a checked `AgentFileSchema`.

Every problem is a 400 that names the field (`agents.0.tool_rules.1.type: ...`), found before anything is
written: ids of the right prefix and unique across the file, and every reference (tool, block, source, file,
message, group) pointing at something the file holds.
"""

import json
from collections import Counter
from typing import Any

from pydantic import ValidationError

from memlet.agent_files.legacy import LegacyAgentFile, is_legacy, legacy_to_v2
from memlet.agent_files.schemas import AgentFileSchema
from memlet.errors import BadRequestError

MAX_ERRORS = 5


def _where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(file)"


def validation_error(exc: ValidationError, prefix: str = "") -> BadRequestError:
    parts = [f"{prefix}{_where(e['loc'])}: {e['msg']}" for e in exc.errors()[:MAX_ERRORS]]
    return BadRequestError(f"Invalid agent file: {'; '.join(parts)}")


def _decode(raw: bytes) -> dict[str, Any]:
    try:
        data: Any = json.loads(raw)
        if isinstance(data, str):  # double-encoded, as some exporters wrote it
            data = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequestError(f"Corrupted agent file format: not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise BadRequestError("Corrupted agent file format: the file must be a JSON object")
    return data


def read_agent_file(raw: bytes) -> AgentFileSchema:
    data = _decode(raw)
    if is_legacy(data):
        try:
            legacy = LegacyAgentFile.model_validate(data)
        except ValidationError as exc:
            raise validation_error(exc) from exc
        try:
            data = legacy_to_v2(legacy)
        except ValueError as exc:
            raise BadRequestError(f"Invalid agent file: {exc}") from exc
    try:
        parsed = AgentFileSchema.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc) from exc
    check_references(parsed)
    return parsed


def _fail(message: str) -> BadRequestError:
    return BadRequestError(f"Invalid agent file: {message}")


def check_references(file: AgentFileSchema) -> None:
    """Ids unique across the file, and every link pointing inside the file."""
    ids = [
        *(a.id for a in file.agents),
        *(b.id for b in file.blocks),
        *(t.id for t in file.tools),
        *(s.id for s in file.sources),
        *(f.id for f in file.files),
        *(g.id for g in file.groups),
        *(m.id for a in file.agents for m in a.messages),
    ]
    repeated = [i for i, n in Counter(ids).items() if n > 1]
    if repeated:
        raise _fail(f"id {repeated[0]!r} appears more than once")
    tools, blocks = {t.id for t in file.tools}, {b.id for b in file.blocks}
    sources, files = {s.id for s in file.sources}, {f.id for f in file.files}
    for i, f in enumerate(file.files):
        if f.source_id not in sources:
            raise _fail(f"files.{i}.source_id: {f.source_id!r} is not a source of the file")
    agent_ids = {a.id for a in file.agents}
    for g_index, group in enumerate(file.groups):
        for agent_id in group.agent_ids:
            if agent_id not in agent_ids:
                raise _fail(f"groups.{g_index}.agent_ids: {agent_id!r} is not an agent of the file")
        manager = getattr(group.manager_config, "manager_agent_id", None)
        if manager is not None and manager not in agent_ids:
            raise _fail(f"groups.{g_index}.manager_config.manager_agent_id: {manager!r} is not an agent of the file")
    for a_index, agent in enumerate(file.agents):
        at = f"agents.{a_index}"
        for field, known, values in (
            ("tool_ids", tools, agent.tool_ids),
            ("block_ids", blocks, agent.block_ids),
            ("source_ids", sources, [*agent.source_ids, *(agent.folder_ids or [])]),
            ("in_context_message_ids", {m.id for m in agent.messages}, agent.in_context_message_ids),
        ):
            for value in values:
                if value not in known:
                    raise _fail(f"{at}.{field}: {value!r} is not in the file")
        for l_index, link in enumerate(agent.files_agents):
            if link.agent_id != agent.id or link.file_id not in files or link.source_id not in sources:
                raise _fail(f"{at}.files_agents.{l_index}: its agent_id, file_id or source_id is not in the file")
