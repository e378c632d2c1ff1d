"""What an agent's system message shows besides the agent row, read in one statement: its blocks in attachment
order, the passage count and distinct tags of its archives, and its folders (the file blocks of a folder's files
are read apart, only for agents that have folders).

For a memory edit's commit (the agent row with it) and for the rebuild of every agent a block or file change
touches (one statement for all of them, instead of three per agent). `prompt_counts` reads only the numbers, for a
memory edit compiled from the turn's own blocks (`loop/edit_write.py`).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ARRAY, String, Table, any_, bindparam, exists, func, select
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.agents.repository import AGENT_ROWS
from memlet.blocks.repository import BLOCK_ROWS, agent_blocks_array
from memlet.db import models as orm
from memlet.db.driver import Driver, DriverSQL, driver_of
from memlet.folders.repository import FOLDER_ROWS, agent_folders_array
from memlet.passages.repository import agent_passage_stats

_AGENTS: Table = orm.Agent.__table__  # type: ignore[assignment]


@dataclass(frozen=True)
class PromptContent:
    blocks: list[orm.Block]
    archival_count: int
    archival_tags: list[str]
    folders: list[orm.Source]


def _columns() -> list[Any]:
    count, tags = agent_passage_stats(_AGENTS.c.organization_id, _AGENTS.c.id)
    return [agent_blocks_array(_AGENTS.c.id), count, tags, agent_folders_array(_AGENTS.c.id)]


def _content(values: Sequence[Any]) -> PromptContent:
    blocks, count, tags, folders = values
    return PromptContent(
        BLOCK_ROWS.detached_all(blocks), int(count or 0), list(tags or []), FOLDER_ROWS.detached_all(folders)
    )


_WITH_AGENT = DriverSQL(select(*AGENT_ROWS.columns, *_columns()).where(_AGENTS.c.id == bindparam("agent_id")))
_OF_AGENTS = DriverSQL(
    select(_AGENTS.c.id, *_columns()).where(_AGENTS.c.id == any_(bindparam("agent_ids", type_=ARRAY(String))))
)


async def agent_with_prompt_content(session: AsyncSession, agent_id: str) -> tuple[orm.Agent, PromptContent] | None:
    """The agent row (detached) and what its prompt shows (None: no such agent)."""
    row = await (await driver_of(session)).fetchrow(_WITH_AGENT, {"agent_id": agent_id})
    if row is None:
        return None
    return AGENT_ROWS.detached(row), _content(row[len(AGENT_ROWS) :])


async def prompt_contents(session: AsyncSession, agent_ids: Sequence[str]) -> dict[str, PromptContent]:
    """What each agent's prompt shows, by agent id (agents that do not exist are left out)."""
    if not agent_ids:
        return {}
    rows = await (await driver_of(session)).fetch(_OF_AGENTS, {"agent_ids": list(agent_ids)})
    return {row[0]: _content(row[1:]) for row in rows}


@dataclass(frozen=True)
class PromptCounts:
    """The numbers an agent's prompt shows, without its blocks: its stored message count and window length (the
    recall count is their difference), its archives' passage count and tags, and whether it has folders; and when
    each attached block was last written (`block_times`, by id)."""

    message_count: int
    window: int
    archival_count: int
    archival_tags: list[str]
    has_folders: bool
    block_times: dict[str, datetime]


def _counts_statement() -> DriverSQL:
    count, tags = agent_passage_stats(_AGENTS.c.organization_id, _AGENTS.c.id)
    folders = exists().where(orm.SourceAgent.agent_id == _AGENTS.c.id)
    window = func.coalesce(func.cardinality(_AGENTS.c.message_ids), 0)

    def attached(column: Any) -> Any:
        ordered = func.array_agg(aggregate_order_by(column, orm.Block.id))
        joined = select(ordered).join_from(orm.BlockAgent, orm.Block, orm.Block.id == orm.BlockAgent.block_id)
        return joined.where(orm.BlockAgent.agent_id == _AGENTS.c.id).scalar_subquery()

    block_ids, block_times = attached(orm.Block.id), attached(orm.Block.updated_at)
    columns = (_AGENTS.c.message_count, window, count, tags, folders, block_ids, block_times)
    return DriverSQL(select(*columns).where(_AGENTS.c.id == bindparam("agent_id")))


_COUNTS = _counts_statement()


async def prompt_counts(driver: Driver, agent_id: str) -> PromptCounts | None:
    """What `PromptCounts` says of the agent, in one statement (None: no such agent)."""
    row = await driver.fetchrow(_COUNTS, {"agent_id": agent_id})
    if row is None:
        return None
    message_count, window, archival_count, tags, has_folders, block_ids, block_times = row
    times = dict(zip(block_ids or [], block_times or [], strict=True))
    return PromptCounts(
        int(message_count or 0), int(window), int(archival_count or 0), list(tags or []), has_folders, times
    )
