"""Send messages to an agent: blocking (``LettaResponse``), streamed (SSE) or async (a ``Run`` returned at once).

Every send creates its run row first, then drives ``run_agent`` in a task of the turn registry that feeds a sink (a
queue, or a stream's ``StreamPump``). The request only reads, so a client that disconnects mid-turn does not cut a step
in half: the loop finishes the turn and closes the run. Errors the loop raises before its first step (unknown agent,
pending approval, busy agent: Letta's 409 body with the active ``run_id``) are HTTP errors of a blocking send; a stream
answers them in-stream (200), except a busy agent's 409 and an unknown agent's 404, as Letta's stream service. Every
chunk of a stream is logged with its ``seq_id`` (``chunk_log``; only a background stream's chunks show it, as Letta's);
a background stream reads that log (``resume.follow``), and a streamed send whose otids match an earlier run's (a
client's retry) attaches to that run's stream instead of starting a turn.
"""

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from memlet.agents.repository import AgentRepository
from memlet.db import models as orm
from memlet.db.engine import single_read
from memlet.errors import AgentBusyError, MemletError
from memlet.llm.chat_format import is_v2
from memlet.log import get_logger
from memlet.loop import events as ev
from memlet.loop.deps import OnFinish
from memlet.loop.runner import RunOptions, run_agent
from memlet.messages.error_events import run_error
from memlet.messages.requests import LettaAsyncRequest, LettaRequest, LettaStreamingRequest
from memlet.messages.schemas import ChoiceLogprobs, LettaResponse, StoredMessage
from memlet.net.outbound import policy_for
from memlet.runs.callbacks import dispatch_run_callback
from memlet.runs.repository import RunRepository
from memlet.runs.schemas import Run
from memlet.turns.admission import SendAdmission
from memlet.turns.chunk_log import RETENTION, ChunkLog
from memlet.turns.resume import follow
from memlet.turns.send_request import (
    DuplicateRequestError,
    logprobs_override,
    request_identity,
    tagged,
    view_options,
)
from memlet.turns.stream_pump import END, Item, StreamPump
from memlet.turns.streaming import EventRenderer, ViewOptions, public_views, stop_reason, usage_of

log = get_logger("messages.sending")

Sink = Callable[[Item], Awaitable[None]]


@dataclass(frozen=True)
class BlockingTurn:
    """A blocking run that ended well: its id, how its rows are shown, the rows it committed, its final event."""

    run_id: str
    opts: ViewOptions
    messages: list[StoredMessage]
    outcome: ev.RunFinished


class SendService(SendAdmission):
    """Starts runs of the agent loop for one actor. Uses the sessionmaker, never a request's session.

    Each run takes a slot of `turns` (this worker's bound on concurrent turns) before its row is written
    (`SendAdmission`: the checks and the run row).
    """

    def launch(
        self,
        agent_id: str,
        run: orm.Run,
        req: LettaRequest,
        *,
        stream_tokens: bool = False,
        llm_override: dict[str, Any] | None = None,
        sink: Sink | None = None,
        lock_wait_s: float | None = None,
        on_started: Callable[[], Awaitable[None]] | None = None,
        on_finish: OnFinish | None = None,
    ) -> asyncio.Queue[Item]:
        """Start the loop in a detached task; its events (or its early exception), then END, go to `sink`
        (by default the returned queue). `on_finish` writes in the transaction that closes the run."""
        queue: asyncio.Queue[Item] = asyncio.Queue()

        async def enqueue(item: Item) -> None:
            queue.put_nowait(item)

        options = RunOptions(
            max_steps=req.max_steps,
            stream_tokens=stream_tokens,
            use_assistant_message=req.use_assistant_message,
            blocking=sink is None,
            override_model=req.override_model,
            llm_config_override=llm_override,
            client_tools=[t.model_dump() for t in req.client_tools or []],
            client_skills=[s.model_dump() for s in req.client_skills or []],
            override_system=req.override_system,
            include_compaction_messages=req.include_compaction_messages,
            run_metadata=run.metadata_,
            request_config=run.request_config,
            background=bool(run.background),
            user_id=self.actor.user_id,
            lock_wait_s=lock_wait_s,
            on_started=on_started,
            on_finish=on_finish,
            conversation_id=self.conversation_id,
            agent_chain=self.agent_chain,
        )
        self.turns.start(run.id, self._drive(agent_id, run.id, req, options, sink or enqueue))
        return queue

    async def run_to_end(
        self, agent_id: str, run: orm.Run, req: LettaRequest, llm_override: dict[str, Any] | None = None
    ) -> None:
        """Start a prepared run whose slot is already reserved, and wait until its loop has ended (batches)."""
        queue = self.launch(agent_id, run, req, llm_override=llm_override)
        while await queue.get() is not END:
            pass

    async def _drive(self, agent_id: str, run_id: str, req: LettaRequest, options: RunOptions, sink: Sink) -> None:
        try:
            # Without a sleeptime group the turn costs sleeptime nothing more.
            group_id = await self._sleeptime_group(agent_id)
            events = run_agent(
                self.deps,
                agent_id=agent_id,
                actor_org_id=self.actor.organization_id,
                run_id=run_id,
                inputs=tagged(list(req.messages or []), group_id),
                options=options,
            )
            last_message_id: str | None = None
            async for event in events:
                if isinstance(event, ev.MessagesCommitted) and event.messages:
                    last_message_id = event.messages[-1].id
                if isinstance(event, ev.RunFinished | ev.RunFailed) and group_id is not None:
                    event = await self._after_turn(agent_id, event, last_message_id, blocking=options.blocking)
                await sink(event)
        except Exception as exc:
            if not isinstance(exc, MemletError):
                log.exception("agent loop failed outside a step")
            with contextlib.suppress(Exception):
                await self._close_failed(agent_id, run_id, exc, streamed=not options.blocking)
            await sink(exc)
        finally:
            await sink(END)
        # After the run is closed (and nobody waits on the queue): tell an async request's callback_url.
        if isinstance(req, LettaAsyncRequest) and req.callback_url:
            policy = policy_for(self.deps.settings)
            await dispatch_run_callback(self.deps.sessionmaker, self.actor, run_id, policy=policy)

    async def _close_failed(self, agent_id: str, run_id: str, exc: Exception, *, streamed: bool) -> None:
        """Close a run whose loop failed before its first step. A streamed one ended as Letta's stream service
        ends it (stop reason ``error``, the stream's error message as ``metadata.error``, ``error`` as the
        agent's last stop reason), so a client reading the run later sees why; a blocking one, or a stream
        refused because the agent was busy, keeps the error's text and no stop reason, as Letta's routes."""
        async with self.deps.sessionmaker() as session, session.begin():
            runs = RunRepository(session)
            if not streamed or isinstance(exc, AgentBusyError):
                await runs.mark_failed(run_id, str(exc))
            elif await runs.mark_failed(run_id, run_error(run_id, exc, None, streamed=True), "error"):
                await AgentRepository(session).set_last_stop_reason(agent_id, "error")

    async def _after_turn(
        self, agent_id: str, event: ev.RunFinished | ev.RunFailed, last_message_id: str | None, *, blocking: bool
    ) -> ev.RunFinished | ev.RunFailed:
        """Fire the agent's sleeptime runs; their ids are the turn's `usage.run_ids`, as in Letta. A turn that fires
        none leaves it null, except a blocking turn of a legacy (memgpt-style) main agent: Letta's runner for those
        always sets the list, so it is ``[]``."""
        assert self.sleeptime is not None
        fired = await self.sleeptime.after_turn(self.actor, agent_id, last_message_id)
        if not fired and not (blocking and is_v2(self._agents.get(agent_id, ("", None))[0])):
            return event
        return replace(event, usage={**event.usage, "run_ids": list(fired)})

    async def send(
        self, agent_id: str, req: LettaStreamingRequest, run_type: str, *, request_logprobs: bool = False
    ) -> LettaResponse:
        """Run the loop to the end and answer with the new messages, the stop reason, the usage and the logprobs of
        the turn's last LLM call (when the agent's config, or with `request_logprobs` the request, asked for them)."""
        done = await self.run_blocking(agent_id, req, run_type, request_logprobs=request_logprobs)
        return LettaResponse(
            messages=public_views(done.messages, done.opts),
            stop_reason=stop_reason(done.outcome.stop_reason),
            usage=usage_of(done.outcome.usage),
            logprobs=ChoiceLogprobs.of(done.outcome.logprobs),
        )

    async def run_blocking(
        self,
        agent_id: str,
        req: LettaStreamingRequest,
        run_type: str,
        *,
        lock_wait_s: float | None = None,
        request_logprobs: bool = False,
    ) -> BlockingTurn:
        """Run the loop to the end; a failed run raises its error (an LLM error keeps its status and shape).

        `lock_wait_s` bounds the wait for the agent's lock (None: the settings' ``agent_lock_timeout_s``);
        `request_logprobs`: the request's logprobs fields override the agent's config for this turn.
        """
        override = await self.admit(agent_id, req)
        if request_logprobs and (fields := logprobs_override(req)) is not None:
            override = {**(override or {}), **fields}
        run = await self.create_run(agent_id, req, {"run_type": run_type}, background=False)
        queue = self.launch(agent_id, run, req, llm_override=override, lock_wait_s=lock_wait_s)
        committed: list[StoredMessage] = []
        final: ev.RunFinished | ev.RunFailed | None = None
        while (item := await queue.get()) is not END:
            if isinstance(item, BaseException):
                raise await self.enriched(item, agent_id, run.id)
            if isinstance(item, ev.MessagesCommitted):
                committed.extend(item.messages)
            elif isinstance(item, ev.RunFinished | ev.RunFailed):
                final = item
        if final is None:
            raise MemletError()
        if isinstance(final, ev.RunFailed):
            raise final.error if isinstance(final.error, MemletError) else MemletError()
        # Letta answers a blocking send with a compaction's summary as a user_message, whatever
        # include_compaction_messages says (that flag only changes streams, and the stored row's role).
        opts = replace(view_options(self.agent_type_of(agent_id), req), summary_as_user=True)
        return BlockingTurn(run.id, opts, committed, final)

    async def open_stream(
        self,
        agent_id: str,
        req: LettaStreamingRequest,
        run_type: str,
        *,
        conversation_id: str | None = None,
        renderer_for: Callable[[str, ViewOptions], EventRenderer] = EventRenderer,
    ) -> AsyncIterator[str]:
        """Start a streamed run (or attach to the run a retry repeats); a busy agent is raised here, as an HTTP 409
        (`StreamPump`: the loop's other early errors are in-stream). A background run's stream reads the chunk log.
        `renderer_for` makes the run's chunks (Letta's messages by default; OpenAI chunks for chat completions)."""
        override = await self.admit(agent_id, req)
        token, otids = request_identity(req)
        if token and (earlier := await self.retried(agent_id, token)) is not None:
            return self.attach(earlier, req)
        metadata = {"run_type": run_type}
        try:
            run = await self.create_run(
                agent_id,
                req,
                metadata,
                background=req.background,
                token=token,
                otids=otids,
                conversation_id=conversation_id,
            )
        except DuplicateRequestError:
            if token and (earlier := await self.retried(agent_id, token)) is not None:
                return self.attach(earlier, req)
            raise AgentBusyError(agent_id) from None
        chunks = ChunkLog(self.deps.sessionmaker, run.id, shown=bool(req.background))
        renderer = renderer_for(run.id, view_options(self.agent_type_of(agent_id), req))
        pump = StreamPump(renderer, chunks, include_pings=req.include_pings, live=not req.background)
        wait_s = self.deps.settings.stream_lock_wait_s
        self.launch(
            agent_id,
            run,
            req,
            stream_tokens=req.stream_tokens,
            llm_override=override,
            sink=pump,
            lock_wait_s=wait_s,
            on_started=pump.start,
        )
        try:
            await pump.started
        except BaseException as exc:
            if token:  # a refused request is no earlier try for its retry to attach to
                async with self.deps.sessionmaker() as session, session.begin():
                    await RunRepository(session).forget_request(run.id)
            raise await self.enriched(exc, agent_id, run.id) from None
        if req.background:
            return follow(self.deps.sessionmaker, run.id, include_pings=req.include_pings)
        return pump.live_chunks()

    async def retried(self, agent_id: str, token: str) -> str | None:
        """The id of the run an earlier request with the same otids started (within the stream retention), if any."""
        since = datetime.now(UTC) - RETENTION
        async with single_read(self.deps.sessionmaker) as session:  # one SELECT: no BEGIN and ROLLBACK around it
            return await RunRepository(session).by_request(self.actor.organization_id, agent_id, token, since)

    def attach(self, run_id: str, req: LettaStreamingRequest) -> AsyncIterator[str]:
        """A retry's stream: the earlier run's chunks from the first one, then its live ones (no new turn)."""
        log.info("a retried request attaches to its first run", extra={"run_id": run_id})
        return follow(self.deps.sessionmaker, run_id, include_pings=req.include_pings)

    async def enriched(self, exc: BaseException, agent_id: str, run_id: str) -> BaseException:
        """A busy error names the run that holds the agent (Letta's 409 body carries its ``run_id``)."""
        if not isinstance(exc, AgentBusyError) or exc.run_id:
            return exc
        async with self.deps.sessionmaker() as session:
            holder = await RunRepository(session).lock_holder(agent_id, exclude=run_id)
        return AgentBusyError(agent_id, holder)

    async def send_async(self, agent_id: str, req: LettaAsyncRequest) -> Run:
        """Create the run, start the loop in the background and return the run at once."""
        override = await self.admit(agent_id, req)
        metadata = {"run_type": "send_message_async", "lettuce": False}
        run = await self.create_run(agent_id, req, metadata, background=True)
        self.launch(agent_id, run, req, llm_override=override)
        return Run.model_validate(run)
