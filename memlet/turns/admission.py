"""What a send checks and writes before its loop starts: the agent (404), the override model (404), the callback
URL (400), a turn slot (429), then the run row (status created). `SendService` builds on it.

On the usual path (no model to resolve, no callback URL, a free slot) the agent is checked by the run's INSERT
itself (`RunRepository.add_for_agent`): one statement with no transaction, where a read and then a transaction took four
round trips. Otherwise it is read first, so the errors keep their order.
"""

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import bindparam
from sqlalchemy.exc import IntegrityError

from memlet import ids
from memlet.actor import Actor
from memlet.db import models as orm
from memlet.db.driver import lone_statements
from memlet.db.engine import single_read, single_statement
from memlet.errors import NotFoundError
from memlet.groups.repository import GroupRepository
from memlet.loop.deps import LoopDeps
from memlet.messages.requests import LettaAsyncRequest, LettaRequest
from memlet.net.outbound import policy_for
from memlet.providers.catalog import ModelCatalog
from memlet.runs.repository import RunRepository
from memlet.turns.registry import TurnRegistry
from memlet.turns.send_request import AfterTurn, DuplicateRequestError, request_config

# The run's INSERT that checks its agent (type and sleeptime group) in the same statement; built once.
_INSERT_FOR_AGENT = RunRepository.insert_for_agent(
    GroupRepository.agent_type_and_sleeptime_group_query(bindparam("p_org"), bindparam("p_agent"))
)


class SendAdmission:
    def __init__(
        self,
        deps: LoopDeps,
        actor: Actor,
        turns: TurnRegistry,
        catalog: ModelCatalog | None = None,
        sleeptime: AfterTurn | None = None,
    ) -> None:
        self.deps = deps
        self.actor = actor
        self.turns = turns
        self.catalog = catalog
        # Counts each finished turn for the agent's sleeptime group and queues its runs (turns/sleeptime_runs.py).
        self.sleeptime = sleeptime
        # Conversation sends (turns/conversation_sending.py): the conversation the runs belong to (None: the
        # agent's own thread); the loop then works on that conversation's window.
        self.conversation_id: str | None = None
        # Turns another agent's multi-agent tool started (turns/agent_messaging.py): the agents waiting on them.
        self.agent_chain: tuple[str, ...] = ()
        # The type and active sleeptime group of each agent this service checked (read in one statement).
        self._agents: dict[str, tuple[str, str | None]] = {}

    # Whether `admit` may leave the agent's check to the run's INSERT (a conversation's sends know their agent
    # and resolve the conversation's own model first).
    checks_agent_in_insert = True

    async def model_override(self, req: LettaRequest) -> dict[str, Any] | None:
        """The llm_config of ``override_model`` (this request only); an unknown handle is a 404 before any run."""
        if not req.override_model or self.catalog is None:
            return None
        async with self.deps.sessionmaker() as session:
            return await self.catalog.resolve_llm(session, self.actor.organization_id, req.override_model)

    async def agent_type(self, agent_id: str) -> str:
        """The agent's type (it decides how replies are shown); 404 for an unknown agent."""
        async with single_read(self.deps.sessionmaker) as session:
            found = await GroupRepository(session).agent_type_and_sleeptime_group(self.actor.organization_id, agent_id)
        if found is None:
            raise NotFoundError("Agent", agent_id)
        self._agents[agent_id] = found
        return found[0]

    async def admit(self, agent_id: str, req: LettaRequest) -> dict[str, Any] | None:
        """The checks of a send before its first write, in this order: the agent (404), then the override model
        (404); returns the override's llm_config. When no other check could answer first (no model to resolve, no
        callback URL, a free turn slot), the agent is checked by the run's INSERT instead (`create_run`): one
        statement, no transaction. `agent_type_of` then tells the agent's type."""
        callback_url = req.callback_url if isinstance(req, LettaAsyncRequest) else None
        if self.checks_agent_in_insert and not req.override_model and not callback_url and self.turns.has_room:
            return None
        if agent_id not in self._agents:  # else checked already by this request (a conversation's arrival)
            await self.agent_type(agent_id)
        return await self.model_override(req)

    def agent_type_of(self, agent_id: str) -> str:
        """The type of an agent this service checked (`admit`, `agent_type` or `create_run`)."""
        return self._agents[agent_id][0]

    async def _sleeptime_group(self, agent_id: str) -> str | None:
        """The sleeptime group the agent manages (its inputs carry its id and its turns count), if any: known from
        `agent_type` on the usual path, else one statement."""
        if self.sleeptime is None:
            return None
        if agent_id in self._agents:
            return self._agents[agent_id][1]
        return await self.sleeptime.group_of(self.actor.organization_id, agent_id)

    async def create_run(
        self,
        agent_id: str,
        req: LettaRequest,
        metadata: dict[str, Any],
        *,
        background: bool,
        token: str | None = None,
        otids: list[str] | None = None,
        conversation_id: str | None = None,
    ) -> orm.Run:
        """The run row (status created), so the client can see the run before the loop starts; one INSERT, which
        also checks the agent (404) when `admit` left that to it.

        Checks the callback URL and reserves the run's turn slot first: a bad URL is a 400 and a full worker
        answers 429, both before anything is written (an unknown agent's 404 first).
        """
        if agent_id not in self._agents and not self.turns.has_room:
            await self.agent_type(agent_id)
        callback_url = req.callback_url if isinstance(req, LettaAsyncRequest) else None
        if callback_url:
            await policy_for(self.deps.settings).check_url(callback_url, "callback_url")
        run_id = ids.new_id(ids.Prefix.RUN)
        self.turns.reserve(run_id)
        try:
            run = self.new_run(run_id, agent_id, req, metadata, callback_url, background=background)
            run.request_token, run.otids = token, otids or None
            run.conversation_id = conversation_id or self.conversation_id
            await self._insert(run)
            return run
        except BaseException:
            self.turns.release(run_id)
            raise

    def new_run(
        self,
        run_id: str,
        agent_id: str,
        req: LettaRequest,
        metadata: dict[str, Any],
        callback_url: str | None = None,
        *,
        background: bool,
    ) -> orm.Run:
        """A run row (status created, leased to this worker) for `req`, not yet added to any session."""
        run = orm.Run(
            id=run_id,
            agent_id=agent_id,
            organization_id=self.actor.organization_id,
            status="created",
            metadata_=metadata,
            request_config=request_config(req),
            background=background,
            num_steps=0,
            callback_url=callback_url,
            created_by_id=self.actor.user_id,
            worker_id=self.deps.worker_id,
        )
        if self.deps.worker_id is not None:
            run.lease_expires_at = datetime.now(UTC) + timedelta(seconds=self.deps.settings.run_lease_s)
        return run

    async def _insert(self, run: orm.Run) -> None:
        agent_id = str(run.agent_id)
        try:
            if agent_id in self._agents:
                async with single_statement(self.deps.sessionmaker) as session:  # one INSERT: no BEGIN and COMMIT
                    await RunRepository(session).add(run)
                return
            agent = {"p_org": self.actor.organization_id, "p_agent": agent_id}
            async with lone_statements(self.deps.sessionmaker) as driver:  # no transaction: one statement
                found = await RunRepository.add_for_agent(driver, run, _INSERT_FOR_AGENT, agent)
        except IntegrityError as exc:
            if "ux_runs_active_request" in str(exc.orig):
                raise DuplicateRequestError() from exc
            raise
        if found is None:
            raise NotFoundError("Agent", agent_id)
        self._agents[agent_id] = (found[0], found[1])
