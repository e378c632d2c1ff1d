"""The list filters of the runs routes (``GET /v1/runs/`` and the internal runs list), applied to a select."""

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ARRAY, Select, Text, cast, func, select

from memlet.db import models as orm

_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "eq": operator.eq,
    "gte": operator.ge,
    "lte": operator.le,
    "gt": operator.gt,
    "lt": operator.lt,
}


@dataclass(frozen=True)
class RunFilters:
    """The filters of ``GET /v1/runs/``, and the extra ones of ``GET /v1/_internal_runs/``.

    A run belongs to its agent's project and template family (runs carry neither column; Letta copies the agent's
    at creation). ``tools_used`` matches any of the given tool names. Duration filters and ``duration_percentile``
    (runs at least as slow as that percentile of the org's runs of the same project, agents and statuses) leave out
    runs without a duration, as Letta does.
    """

    agent_ids: Sequence[str] | None = None
    statuses: Sequence[str] | None = None
    background: bool | None = None
    stop_reason: str | None = None
    conversation_id: str | None = None
    run_id: str | None = None
    template_family: str | None = None
    project_id: str | None = None
    start_date: datetime | None = None
    end_date: datetime | None = None
    step_count: int | None = None
    step_count_operator: str = "eq"
    tools_used: Sequence[str] | None = None
    duration_value: int | None = None
    duration_operator: str | None = None
    duration_percentile: int | None = None

    def _scope(self, stmt: Select[Any], org_id: str) -> Select[Any]:
        """The filters the percentile is computed over too."""
        r = orm.Run
        stmt = stmt.where(r.organization_id == org_id)
        if self.project_id:
            stmt = stmt.where(r.agent_id.in_(select(orm.Agent.id).where(orm.Agent.project_id == self.project_id)))
        if self.agent_ids:
            stmt = stmt.where(r.agent_id.in_(list(self.agent_ids)))
        if self.statuses:
            stmt = stmt.where(r.status.in_(list(self.statuses)))
        return stmt

    def apply(self, stmt: Select[Any], org_id: str, *, by_duration: bool) -> Select[Any]:
        r = orm.Run
        stmt = self._scope(stmt, org_id)
        for column, value in (
            (r.id, self.run_id),
            (r.stop_reason, self.stop_reason),
            (r.conversation_id, self.conversation_id),
        ):
            if value is not None:
                stmt = stmt.where(column == value)
        if self.background is not None:
            stmt = stmt.where(r.background.is_(self.background))
        if self.template_family:
            family = select(orm.Agent.id).where(orm.Agent.base_template_id == self.template_family)
            stmt = stmt.where(r.agent_id.in_(family))
        if self.start_date:
            stmt = stmt.where(r.created_at >= self.start_date)
        if self.end_date:
            stmt = stmt.where(r.created_at <= self.end_date)
        if self.step_count is not None:
            stmt = stmt.where(_COMPARE[self.step_count_operator](r.num_steps, self.step_count))
        if self.tools_used:
            stmt = stmt.where(r.tools_used.op("?|")(cast(list(self.tools_used), ARRAY(Text))))
        return self._apply_duration(stmt, org_id, by_duration=by_duration)

    def _apply_duration(self, stmt: Select[Any], org_id: str, *, by_duration: bool) -> Select[Any]:
        r = orm.Run
        filtered = self.duration_value is not None and self.duration_operator is not None
        if by_duration or filtered or self.duration_percentile is not None:
            stmt = stmt.where(r.total_duration_ns.is_not(None))
        if filtered:
            stmt = stmt.where(_COMPARE[self.duration_operator or "eq"](r.total_duration_ns, self.duration_value))
        if self.duration_percentile is not None:
            threshold = self._scope(
                select(func.percentile_cont(self.duration_percentile / 100).within_group(r.total_duration_ns)).where(
                    r.total_duration_ns.is_not(None)
                ),
                org_id,
            )
            stmt = stmt.where(r.total_duration_ns >= threshold.scalar_subquery())
        return stmt
