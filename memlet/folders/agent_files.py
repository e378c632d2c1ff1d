"""Which files an agent has open: attaching a folder's files, opening and closing them, least recently used first.

At most `max_files_open` files are open at once (the agent's setting, else its model's default). Opening one more
closes the files the agent used least recently; attaching a folder opens its files (newest attach wins) under
the same cap. What a file block shows is the file's numbered view, cut to `per_file_view_window_char_limit`.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.folders import line_view
from memlet.folders.file_agent_repository import FileAgentRepository
from memlet.folders.line_view import file_defaults_for_context_window


def file_limits(agent: orm.Agent) -> tuple[int, int]:
    """(max_files_open, per_file_view_window_char_limit) of the agent, defaults from its context window."""
    max_files, char_limit = file_defaults_for_context_window((agent.llm_config or {}).get("context_window"))
    return agent.max_files_open or max_files, agent.per_file_view_window_char_limit or char_limit


@dataclass
class Opened:
    """What opening a file changed: the files closed to make room, and the window the file had before."""

    closed: list[str] = field(default_factory=list)
    previous_range: tuple[int | None, int | None] | None = None


class AgentFiles:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session
        self.rows = FileAgentRepository(session)

    async def attach(
        self, agent: orm.Agent, files: Sequence[orm.FileMetadata], texts: dict[str, str | None]
    ) -> list[str]:
        """Give the agent these files, opening them (up to the cap, first ones first); the names closed."""
        max_open, _ = file_limits(agent)
        names = [f.file_name for f in files]
        opened = set(names[:max_open])
        keep_old = max(max_open - len(names), 0)
        old_open = [r for r in await self.rows.open_oldest_first(agent.id) if r.file_name not in set(names)]
        evicted = old_open[: max(len(old_open) - keep_old, 0)]
        await self.rows.close(agent.id, [r.file_id for r in evicted])
        now = datetime.now(UTC)
        for meta in files:
            # A file not parsed yet stays closed; an empty one opens with an empty view, as in Letta.
            text = texts.get(meta.id)
            is_open = meta.file_name in opened and text is not None
            view = (line_view.window(text, meta.file_type, meta.file_name) if text else "") if is_open else None
            row = await self.rows.find_by_file(agent.id, meta.id)
            if row is None:
                row = self.rows.add_link(agent, meta)
            row.is_open, row.visible_content, row.last_accessed_at = is_open, view, now
            row.start_line = row.end_line = None
        await self.session.flush()
        return [r.file_name for r in evicted] + [n for n in names[max_open:]]

    async def open(
        self,
        agent: orm.Agent,
        meta: orm.FileMetadata,
        view: str,
        *,
        start_line: int | None = None,
        end_line: int | None = None,
    ) -> Opened:
        """Open (or re-window) one file, closing the least recently used others past the cap."""
        max_open, _ = file_limits(agent)
        result = Opened()
        others = [r for r in await self.rows.open_oldest_first(agent.id) if r.file_id != meta.id]
        evicted = others[: max(len(others) - (max_open - 1), 0)]
        await self.rows.close(agent.id, [r.file_id for r in evicted])
        result.closed = [r.file_name for r in evicted]
        row = await self.rows.find_by_file(agent.id, meta.id)
        if row is None:
            row = self.rows.add_link(agent, meta)
        elif row.is_open and (row.start_line, row.end_line) != (start_line, end_line):
            result.previous_range = (row.start_line, row.end_line)
        row.is_open, row.visible_content = True, view
        row.start_line, row.end_line, row.last_accessed_at = start_line, end_line, datetime.now(UTC)
        await self.session.flush()
        return result

    async def close(self, agent_id: str, file_id: str) -> None:
        """Close a file on request: its block shows nothing, but the row keeps the view it had."""
        await self.rows.close_keeping_view(agent_id, file_id)

    async def close_all_except(self, agent_id: str, keep_names: Sequence[str] = ()) -> list[str]:
        return await self.rows.close_all_except(agent_id, keep_names)
