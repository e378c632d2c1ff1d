"""Runs and steps as the API shows them: list, retrieve, delete, a run's messages, usage, steps and metrics."""

from collections.abc import Sequence
from dataclasses import replace
from itertools import groupby

from sqlalchemy.ext.asyncio import AsyncSession

from memlet import ids
from memlet.actor import Actor
from memlet.agents.repository import AgentRepository
from memlet.db import models as orm
from memlet.db.pagination import Page
from memlet.errors import BadRequestError
from memlet.messages.repository import MessageRepository
from memlet.messages.schemas import LettaMessage, StoredMessage
from memlet.messages.views import filter_message_types, to_letta_messages
from memlet.runs.repository import RunFilters, RunRepository
from memlet.runs.schemas import (
    ModifyFeedbackRequest,
    Run,
    RunMetrics,
    Step,
    StepMetrics,
    UsageStatistics,
    UsageStatisticsCompletionTokenDetails,
    UsageStatisticsPromptTokenDetails,
)
from memlet.runs.step_repository import StepFilters, StepRepository
from memlet.tools.repository import ToolRepository


def _check_id(value: str, prefix: ids.Prefix) -> None:
    # Run ids are plain strings in Letta's paths; a malformed one is a 400 naming the expected format.
    if not ids.is_valid(value, prefix):
        raise BadRequestError(
            f"INVALID_ARGUMENT: Invalid {prefix.value} ID format: {value}. Expected format: '{prefix.value}-<uuid4>'"
        )


class RunService:
    def __init__(self, session: AsyncSession, actor: Actor) -> None:
        self.session = session
        self.actor = actor
        self.runs = RunRepository(session)
        self.steps = StepRepository(session)
        self.messages = MessageRepository(session)

    async def row(self, run_id: str) -> orm.Run:
        _check_id(run_id, ids.Prefix.RUN)
        run = await self.runs.get_or_404(self.actor.organization_id, run_id)
        return run

    async def get(self, run_id: str) -> Run:
        return Run.model_validate(await self.row(run_id))

    async def list_runs(self, filters: RunFilters, page: Page, *, order_by: str = "created_at") -> list[Run]:
        percentile = filters.duration_percentile
        if percentile is not None and not 1 <= percentile <= 100:
            raise BadRequestError(f"INVALID_ARGUMENT: duration_percentile must be between 1 and 100. Got: {percentile}")
        if filters.tools_used:
            filters = replace(filters, tools_used=await self._tool_names(filters.tools_used))
        rows = await self.runs.list_runs(self.actor.organization_id, filters, page, order_by=order_by)
        return [Run.model_validate(r) for r in rows]

    async def _tool_names(self, tools: Sequence[str]) -> list[str]:
        """Runs record the names of the tools they called; Letta's clients filter by tool id, so ids become names
        (a value that is not a known tool id is taken as a name)."""
        found = await ToolRepository(self.session).by_ids(self.actor.organization_id, list(tools))
        return list(dict.fromkeys([*tools, *(t.name for t in found)]))

    async def delete(self, run_id: str) -> None:
        await self.row(run_id)
        await self.runs.delete(run_id)

    async def messages_of(self, run_id: str, page: Page) -> list[LettaMessage]:
        """The run's stored messages (its input included), filtered by the types the run asked for."""
        run = await self.row(run_id)
        rows = await self.messages.page_for_run(run_id, page)
        agent = await AgentRepository(self.session).find(self.actor.organization_id, run.agent_id or "")
        newest_first = page.descending
        views = to_letta_messages(
            [StoredMessage.model_validate(r) for r in (rows[::-1] if newest_first else rows)],
            text_is_assistant=agent is not None and agent.agent_type == "letta_v1_agent",
        )
        views = filter_message_types(views, (run.request_config or {}).get("include_return_message_types"))
        return views[::-1] if newest_first else views

    async def usage(self, run_id: str) -> UsageStatistics:
        await self.row(run_id)
        totals = await self.steps.token_totals(run_id)
        return UsageStatistics(
            completion_tokens=totals.completion_tokens,
            prompt_tokens=totals.prompt_tokens,
            total_tokens=totals.total_tokens,
            prompt_tokens_details=UsageStatisticsPromptTokenDetails(
                cached_tokens=totals.cached_input_tokens,
                cache_read_tokens=totals.cached_input_tokens,
                cache_creation_tokens=totals.cache_write_tokens,
            ),
            completion_tokens_details=UsageStatisticsCompletionTokenDetails(reasoning_tokens=totals.reasoning_tokens),
        )

    async def steps_of(self, run_id: str, page: Page) -> list[Step]:
        await self.row(run_id)
        rows = await self.steps.list_steps(self.actor.organization_id, StepFilters(run_id=run_id), page)
        return [Step.from_row(r) for r in rows]

    async def metrics(self, run_id: str) -> RunMetrics:
        run = await self.row(run_id)
        agent = (
            await AgentRepository(self.session).find(self.actor.organization_id, run.agent_id) if run.agent_id else None
        )
        return RunMetrics(
            id=run.id,
            agent_id=run.agent_id,
            project_id=agent.project_id if agent is not None else None,
            run_start_ns=int(run.created_at.timestamp() * 1e9),
            run_ns=run.cancelled_run_ns if run.cancelled_run_ns is not None else run.total_duration_ns,
            num_steps=run.num_steps,
            tools_used=await self._tool_ids(run.tools_used or []),
        )

    async def _tool_ids(self, names: Sequence[str]) -> list[str] | None:
        """The ids of the tools a run called, each once (runs record names); null when none ran, as in Letta."""
        if not names:
            return None
        found = await ToolRepository(self.session).by_names(self.actor.organization_id, list(dict.fromkeys(names)))
        return [t.id for t in found] or None


class StepService:
    def __init__(self, session: AsyncSession, actor: Actor) -> None:
        self.session = session
        self.actor = actor
        self.steps = StepRepository(session)

    async def row(self, step_id: str) -> orm.Step:
        step = await self.steps.get_or_404(self.actor.organization_id, step_id)
        return step

    async def get(self, step_id: str) -> Step:
        return Step.from_row(await self.row(step_id))

    async def list_steps(self, filters: StepFilters, page: Page) -> list[Step]:
        return [Step.from_row(r) for r in await self.steps.list_steps(self.actor.organization_id, filters, page)]

    async def set_feedback(self, step_id: str, body: ModifyFeedbackRequest) -> Step:
        step = await self.row(step_id)
        step.feedback = body.feedback
        if body.tags:  # as Letta: an empty list keeps the tags the step has
            step.tags = list(body.tags)
        await self.session.flush()
        return Step.from_row(step)

    async def metrics(self, step_id: str) -> StepMetrics:
        step = await self.row(step_id)
        timings = step.step_metrics or {}
        return StepMetrics(
            id=step.id,
            run_id=step.run_id,
            agent_id=step.agent_id,
            provider_id=step.provider_id,
            project_id=step.project_id,
            **{
                k: v
                for k, v in timings.items()
                if k in StepMetrics.model_fields and k not in ("id", "run_id", "agent_id", "project_id")
            },
        )

    async def messages_of(self, step_id: str, page: Page) -> list[LettaMessage]:
        step = await self.row(step_id)
        rows = await MessageRepository(self.session).page_for_step(step.id, page)
        newest_first = page.descending
        # As Letta's step route converts them, with its defaults: text is inner thought (reasoning), and each
        # message's parts come last first.
        views = to_letta_messages(
            [StoredMessage.model_validate(r) for r in (rows[::-1] if newest_first else rows)], text_is_assistant=False
        )
        per_row = [list(group)[::-1] for _, group in groupby(views, key=lambda v: v.id)]
        return [view for row in (per_row[::-1] if newest_first else per_row) for view in row]
