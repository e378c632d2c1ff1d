"""Reading a streamed run's chunk log: replay the chunks after a cursor, then follow the live ones to ``[DONE]``.

A reader reads ``run_chunks`` for ``seq_id > last`` whenever the process's one poller (``chunk_watch``) sees the
run's log grow, so any server process sharing the database can serve a resume, and a chunk is sent once whatever
the timing: the cursor only moves forward, and the writer commits its batches in order. A client's
``poll_interval`` is accepted for Letta's sake; the poller's 0.1 s tick serves every reader. The stream ends after the final chunk (``[DONE]``). If the
run ended without one (its process died and the sweep has not closed it yet, or it never streamed), the reader
ends the stream itself the way Letta guarantees: stop reason ``error``, an ``error_message``, ``[DONE]``.

Entry points: ``stream_run`` (``POST /v1/runs/{run_id}/stream``), ``stream_selected`` (the conversations stream:
by run id, by otid, or the newest active run of a conversation or an agent), and ``follow`` (the tail of a
background send, and a retry attaching to its first run).
"""

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.actor import Actor
from memlet.db import models as orm
from memlet.db.engine import single_read
from memlet.errors import BadRequestError, GoneError, NotFoundError
from memlet.messages.schemas import LettaPing
from memlet.runs.chunk_repository import RunChunkRepository
from memlet.runs.repository import RunRepository
from memlet.runs.schemas import RetrieveStreamRequest
from memlet.turns.chunk_log import RETENTION, error_tail
from memlet.turns.chunk_watch import watching
from memlet.turns.streaming import sse

KEEPALIVE_INTERVAL_S = 20.0
OTID_RETRIES_S = (0.25, 0.5, 1.0)
NOT_BACKGROUND = "INVALID_ARGUMENT: Run was not created in background mode, so it cannot be retrieved."
EXPIRED = "EXPIRED: Run was created more than 3 hours ago, and is now expired."
NO_ACTIVE = "INVALID_ARGUMENT: No active runs found for this conversation."
INCOMPLETE = "Stream ended unexpectedly without a terminal event."


def check_resumable(run: orm.Run) -> None:
    """Letta's rules: only background runs (400), and only for 3 hours (410)."""
    if not run.background:
        raise BadRequestError(NOT_BACKGROUND)
    if run.created_at < datetime.now(UTC) - RETENTION:
        raise GoneError(EXPIRED)


async def follow(
    maker: async_sessionmaker[AsyncSession],
    run_id: str,
    *,
    starting_after: int = 0,
    include_pings: bool = True,
    batch_size: int = 100,
) -> AsyncIterator[str]:
    """The run's chunks with seq_id > `starting_after`, replayed then followed until the final one.

    Between reads the reader sleeps on its `ChunkWatch` (one poller per process reads every followed run at
    once), so an idle stream costs a ping every `KEEPALIVE_INTERVAL_S` and nothing else of its own.
    """
    last = starting_after
    async with watching(maker, run_id, last) as watch:
        quiet_since = time.monotonic()
        woken = True  # read the log first; afterwards only when the poller says it grew or the run ended
        while True:
            taken = watch.take()
            chunks = taken or []
            # A wake that handed over only chunks this reader's own read already got (a local writer's batch
            # racing that read) needs no read; any other wake does, and so does a run that looks ended.
            if not chunks and woken and (taken is None or watch.ended_checks >= 2):
                async with single_read(maker) as session:  # one SELECT: no BEGIN and ROLLBACK around it
                    chunks = await RunChunkRepository(session).after(run_id, last, batch_size)
            for chunk in chunks:
                yield chunk.data
                last = watch.last = chunk.seq_id
                if chunk.final:
                    return
            now = time.monotonic()
            if chunks:
                quiet_since = now
                watch.ended_checks = 0
                if len(chunks) >= batch_size:
                    continue
            elif watch.ended_checks >= 2:  # ended, and still no final chunk a status read later: end it here
                for text in error_tail(run_id, INCOMPLETE, "stream_incomplete"):
                    yield text
                return
            if include_pings and now - quiet_since >= KEEPALIVE_INTERVAL_S:
                quiet_since = now
                yield sse(LettaPing.create(run_id, seq_id=last or None))
            woken = await watch.wait(max(0.0, KEEPALIVE_INTERVAL_S - (now - quiet_since)) if include_pings else None)


def _reader(maker: async_sessionmaker[AsyncSession], run_id: str, req: RetrieveStreamRequest) -> AsyncIterator[str]:
    return follow(
        maker,
        run_id,
        starting_after=req.starting_after,
        include_pings=req.include_pings is not False,
        batch_size=req.batch_size or 100,
    )


async def stream_run(
    maker: async_sessionmaker[AsyncSession], actor: Actor, run_id: str, req: RetrieveStreamRequest
) -> AsyncIterator[str]:
    """``POST /v1/runs/{run_id}/stream``: checks first (404, 400, 410 as HTTP errors), then the reader."""
    async with maker() as session:
        run = await RunRepository(session).get_or_404(actor.organization_id, run_id)
    check_resumable(run)
    return _reader(maker, run.id, req)


async def select_run(
    maker: async_sessionmaker[AsyncSession],
    actor: Actor,
    *,
    run_id: str | None = None,
    otid: str | None = None,
    agent_id: str | None = None,
    conversation_id: str | None = None,
) -> orm.Run:
    """The run a conversation's resume means: `run_id`; else the run whose request carried `otid` (retried
    briefly, its send may still be starting: 404 after); else the newest created/running run of the
    conversation, or of the agent when only `agent_id` is given, as Letta's default mode (400 when there is none)."""
    org = actor.organization_id
    if run_id:
        async with maker() as session:
            return await RunRepository(session).get_or_404(org, run_id)
    since = datetime.now(UTC) - RETENTION
    if otid:
        for delay in (*OTID_RETRIES_S, None):
            async with maker() as session:
                run = await RunRepository(session).by_otid(
                    org, otid, since, agent_id=agent_id, conversation_id=conversation_id
                )
            if run is not None:
                return run
            if delay is not None:
                await asyncio.sleep(delay)
        raise NotFoundError("Run", message=f"No run found for otid={otid}. The run may have expired or never existed.")
    async with maker() as session:
        run = await RunRepository(session).newest_active(org, agent_id=agent_id, conversation_id=conversation_id)
    if run is None:
        raise BadRequestError(NO_ACTIVE)
    return run


async def stream_selected(
    maker: async_sessionmaker[AsyncSession],
    actor: Actor,
    req: RetrieveStreamRequest,
    *,
    agent_id: str | None = None,
    conversation_id: str | None = None,
) -> AsyncIterator[str]:
    """The conversations resume: `select_run` by the request's run_id / otid (or the newest active run of the
    thread given), the same checks as `stream_run`, then the reader."""
    run = await select_run(
        maker, actor, run_id=req.run_id, otid=req.otid, agent_id=agent_id, conversation_id=conversation_id
    )
    check_resumable(run)
    return _reader(maker, run.id, req)
