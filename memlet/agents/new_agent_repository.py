"""SQL for a new agent: its row, its new blocks and its links (blocks, tools, tags, identities), in one statement.

Each table gets one data-modifying CTE of a statement built once at import: the agent's row from a bind parameter per
column, the other tables' rows from one JSON array each (``json_populate_recordset`` into the table's row type, then the
model's columns: ``json``, not ``jsonb``, so a block's ``json`` metadata keeps its key order). Postgres checks the
foreign keys between the CTEs at the end of the statement, so the links may name the agent and blocks inserted beside
them. The rows written are the ones the ORM's unit of work wrote: every column the model maps, its Python-side default
filled in where the caller left it unset. The messages go through `MessageRepository.add`, the one message inserter.
"""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Table, Text, bindparam, cast, func, insert, literal_column, select
from sqlalchemy.dialects.postgresql import JSON
from sqlalchemy.ext.asyncio import AsyncSession

from memlet.db import models as orm
from memlet.db.base import Base
from memlet.db.engine import json_text

_AGENTS: Table = orm.Agent.__table__  # type: ignore[assignment]


def _from_json(model: type[Base], param: str) -> Any:
    """``INSERT INTO <table> (<columns>) SELECT <columns> FROM json_populate_recordset(NULL::<table>, :param)``."""
    table: Table = model.__table__  # type: ignore[assignment]
    rows = func.json_populate_recordset(
        literal_column(f"NULL::{table.name}"), cast(bindparam(param, type_=Text), JSON)
    ).table_valued(*(c.name for c in table.columns))
    columns = [c.name for c in table.columns]
    return insert(table).from_select(columns, select(*(rows.c[c] for c in columns)), include_defaults=False)


def _new_agent_statement() -> Any:
    agent = insert(_AGENTS).values({c.name: bindparam(f"a_{c.name}", type_=c.type) for c in _AGENTS.columns})
    ctes = [
        agent.cte("new_agent"),
        _from_json(orm.Block, "blocks").cte("new_blocks"),
        _from_json(orm.BlockAgent, "block_links").cte("new_block_links"),
        _from_json(orm.ToolAgent, "tool_links").cte("new_tool_links"),
        _from_json(orm.AgentTag, "tags").cte("new_tags"),
        _from_json(orm.IdentityAgent, "identity_links").cte("new_identity_links"),
    ]
    return select(literal_column("1")).add_cte(*ctes)


_NEW_AGENT = _new_agent_statement()

# (attribute, column) pairs of each model the statement writes.
_COLUMNS: dict[type[Base], tuple[tuple[str, Any], ...]] = {}


def _column_values(row: Base) -> dict[str, Any]:
    """The row's value of every mapped column by column name. A column the caller left unset gets its Python-side
    default (or None), set on the row too, as a flush would: the response is then built from complete rows. (An
    unset JSONB column with no default would hold JSON null where a flush left SQL NULL; the create path sets every
    JSONB column of the agent, and a block's are never None.)"""
    model = type(row)
    columns = _COLUMNS.get(model)
    if columns is None:
        columns = _COLUMNS[model] = tuple((a.key, a.columns[0]) for a in model.__mapper__.column_attrs)
    state = row.__dict__
    values = {}
    for attr, column in columns:
        if attr not in state:
            default = column.default
            setattr(row, attr, None if default is None else default.arg(None) if default.is_callable else default.arg)
        values[column.name] = state[attr]
    return values


class NewAgentRepository:
    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def insert(
        self,
        agent: orm.Agent,
        new_blocks: Sequence[orm.Block],
        blocks: Sequence[orm.Block],
        tool_ids: Sequence[str],
        tags: Sequence[str],
        identity_ids: Sequence[str],
    ) -> None:
        """Store a new agent (an unsaved row, completed here), its `new_blocks` (likewise), and its links: `blocks`
        (new and existing) and `tool_ids` in that order, `tags` and `identity_ids` (each distinct)."""
        params = {f"a_{name}": value for name, value in _column_values(agent).items()}
        # The other tables' rows as JSON text, encoded here (timestamps in ISO 8601) whatever the engine's encoder.
        links = enumerate(blocks)
        params["blocks"] = json_text([_column_values(b) for b in new_blocks])
        params["block_links"] = json_text(
            [{"agent_id": agent.id, "block_id": b.id, "block_label": b.label, "position": i} for i, b in links]
        )
        params["tool_links"] = json_text(
            [{"agent_id": agent.id, "tool_id": t, "position": i} for i, t in enumerate(tool_ids)]
        )
        params["tags"] = json_text([{"agent_id": agent.id, "tag": t} for t in tags])
        params["identity_links"] = json_text([{"identity_id": i, "agent_id": agent.id} for i in identity_ids])
        conn = await self.session.connection()
        await conn.execute(_NEW_AGENT, params)
