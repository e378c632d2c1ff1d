"""The filters and sort orders of ``GET /v1/agents/`` (and its count), as SQL on the agents table."""

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, DateTime, Select, func, literal, select

from memlet.db import models as orm
from memlet.db.sql import escape_like


def sort_column(sort_by: str, descending: bool) -> ColumnElement[Any]:
    if sort_by == "last_run_completion":
        # As in Letta, agents that never ran come last in either order (a NULL would drop out of the cursor
        # comparison and break paging, so it sorts as the earliest or latest time instead).
        never = (datetime.min if descending else datetime.max).replace(tzinfo=UTC)
        return func.coalesce(orm.Agent.last_run_completion, literal(never, DateTime(timezone=True)))
    if sort_by == "updated_at":
        return orm.Agent.updated_at  # type: ignore[return-value]
    return orm.Agent.created_at  # type: ignore[return-value]


class AgentFilters:
    """The list/count filters of ``GET /v1/agents/``."""

    def __init__(
        self,
        *,
        name: str | None = None,
        tags: Sequence[str] | None = None,
        match_all_tags: bool = False,
        query_text: str | None = None,
        project_id: str | None = None,
        template_id: str | None = None,
        base_template_id: str | None = None,
        identity_id: str | None = None,
        identifier_keys: Sequence[str] | None = None,
        last_stop_reason: str | None = None,
        created_by_id: str | None = None,
        exclude_hidden: bool = False,
    ) -> None:
        self.name = name
        self.tags = list(tags or [])
        self.match_all_tags = match_all_tags
        self.query_text = query_text
        self.project_id = project_id
        self.template_id = template_id
        self.base_template_id = base_template_id
        self.identity_id = identity_id
        self.identifier_keys = list(identifier_keys or [])
        self.last_stop_reason = last_stop_reason
        self.created_by_id = created_by_id
        self.exclude_hidden = exclude_hidden

    def apply(self, stmt: Select, org_id: str) -> Select:  # type: ignore[type-arg]
        a = orm.Agent
        stmt = stmt.where(a.organization_id == org_id)
        for column, value in (
            (a.name, self.name),
            (a.project_id, self.project_id),
            (a.template_id, self.template_id),
            (a.base_template_id, self.base_template_id),
            (a.last_stop_reason, self.last_stop_reason),
            (a.created_by_id, self.created_by_id),
        ):
            if value:  # Letta ignores an empty value, `name=""` included
                stmt = stmt.where(column == value)
        if self.exclude_hidden:
            stmt = stmt.where(a.hidden.is_not(True))
        if self.query_text:
            stmt = stmt.where(a.name.ilike(f"%{escape_like(self.query_text)}%", escape="\\"))
        if self.tags:
            tagged = (
                select(orm.AgentTag.agent_id).where(orm.AgentTag.tag.in_(self.tags)).group_by(orm.AgentTag.agent_id)
            )
            if self.match_all_tags:
                tagged = tagged.having(func.count(func.distinct(orm.AgentTag.tag)) == len(set(self.tags)))
            stmt = stmt.where(a.id.in_(tagged))
        if self.identity_id:
            stmt = stmt.where(
                a.id.in_(select(orm.IdentityAgent.agent_id).where(orm.IdentityAgent.identity_id == self.identity_id))
            )
        if self.identifier_keys:
            stmt = stmt.where(
                a.id.in_(
                    select(orm.IdentityAgent.agent_id)
                    .join(orm.Identity, orm.Identity.id == orm.IdentityAgent.identity_id)
                    .where(orm.Identity.identifier_key.in_(self.identifier_keys))
                )
            )
        return stmt
