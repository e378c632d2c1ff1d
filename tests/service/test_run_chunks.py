"""The chunk log of streamed runs: batched appends, the ending a swept run's log gets, pruning after 3 hours."""

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet import ids, migrations
from memlet.actor import Actor
from memlet.config import Settings
from memlet.db import models as orm
from memlet.db.embedded import EmbeddedPostgres
from memlet.db.engine import create_engine, create_sessionmaker
from memlet.errors import BadRequestError
from memlet.runs.chunk_repository import Chunk, RunChunkRepository
from memlet.runs.schemas import RetrieveStreamRequest
from memlet.turns import chunk_log, chunk_watch
from memlet.turns.chunk_log import ChunkLog, prune
from memlet.turns.lifecycle import LOST_MESSAGE, sweep
from memlet.turns.resume import follow, select_run, stream_selected
from memlet.turns.stream_pump import END, StreamPump
from memlet.turns.streaming import EventRenderer, ViewOptions
from tests.service.loop_factories import LoopEnv, loop_env
from tests.service.test_run_leases import LEASE_S, ME, POLICY, add_run

__all__ = ["loop_env"]

PING = '{"message_type":"ping","seq_id":null}'


@pytest.fixture(scope="module")
def settings(settings: Settings, embedded_pg: EmbeddedPostgres, pg_uri: str) -> Iterator[Settings]:
    """A database of its own: the session's live server sweeps and prunes the shared one."""
    name = "memlet_run_chunks"
    embedded_pg.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE); CREATE DATABASE "{name}";')
    uri = make_url(pg_uri).set(database=name).render_as_string(hide_password=False)
    asyncio.run(migrations.upgrade(uri))
    yield settings.model_copy(update={"pg_uri": uri})
    embedded_pg.psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE);')


@pytest.fixture
async def maker(settings: Settings) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(settings.pg_uri or "", settings)
    yield create_sessionmaker(engine)
    await engine.dispose()


async def test_a_batch_is_appended_as_arrays_and_read_back_in_order(
    loop_env: LoopEnv, maker: async_sessionmaker[AsyncSession]
) -> None:
    """`RunChunkRepository.append` (one statement for a batch of any size: the batch as arrays) skips a seq_id
    already stored and never rewrites it; `after` reads on from a cursor, in order, up to its limit."""
    run_id = await add_run(loop_env, await loop_env.agent(), background=True)
    async with maker() as session, session.begin():
        chunks = RunChunkRepository(session)
        await chunks.append(run_id, [Chunk(1, "one"), Chunk(2, "two")])
        await chunks.append(run_id, [Chunk(2, "rewritten"), Chunk(3, "three"), Chunk(4, "last", final=True)])
    async with maker() as session:
        chunks = RunChunkRepository(session)
        assert await chunks.after(run_id, 0, 10) == [
            Chunk(1, "one"),
            Chunk(2, "two"),
            Chunk(3, "three"),
            Chunk(4, "last", final=True),
        ]
        assert await chunks.after(run_id, 1, 2) == [Chunk(2, "two"), Chunk(3, "three")]
        assert await chunks.tail(run_id) == (4, True)


async def test_a_token_stream_is_appended_in_batches(
    loop_env: LoopEnv, maker: async_sessionmaker[AsyncSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = await add_run(loop_env, await loop_env.agent(), background=True)
    appends: list[int] = []
    original = RunChunkRepository.append

    async def counting(self: RunChunkRepository, run: str, chunks: Any) -> None:
        appends.append(len(chunks))
        await original(self, run, chunks)

    monkeypatch.setattr(RunChunkRepository, "append", counting)
    log = ChunkLog(maker, run_id)
    written = [await log.write(f"data: {PING}\n\n") for _ in range(120)]
    await log.write(chunk_log.DONE)
    assert written[0] == 'data: {"message_type":"ping","seq_id":1}\n\n' and '"seq_id":120' in written[-1]
    # 50 + 50 + the rest with [DONE] on a quiet machine; the 50 ms timer may cut a few more batches under load,
    # but never anything near one INSERT per chunk.
    assert sum(appends) == 121 and len(appends) <= 10
    replay = [c async for c in follow(maker, run_id, starting_after=100)]
    assert replay == [*written[100:], chunk_log.DONE]


async def test_the_sweep_ends_the_log_of_a_run_whose_worker_died(
    loop_env: LoopEnv, maker: async_sessionmaker[AsyncSession]
) -> None:
    agent = await loop_env.agent()
    run_id = await add_run(loop_env, agent, background=True, worker_id="worker-gone")
    silent = await add_run(loop_env, agent, background=True, worker_id="worker-gone")  # never streamed
    log = ChunkLog(maker, run_id)
    await log.write(f"data: {PING}\n\n")
    await log.close()
    assert sorted(await sweep(maker, ME, LEASE_S, policy=POLICY)) == sorted([run_id, silent])
    async with maker() as session:
        assert await RunChunkRepository(session).tail(run_id) == (4, True)  # stored, not invented by the reader
    tail = [c async for c in follow(maker, run_id, starting_after=1)]
    assert tail[0] == 'data: {"message_type":"stop_reason","stop_reason":"error"}\n\n'
    assert tail[1].startswith("event: error\ndata: ") and '"run_id":"' + run_id in tail[1]
    assert LOST_MESSAGE in tail[1]
    assert tail[2] == chunk_log.DONE and len(tail) == 3
    async with maker() as session:
        assert await RunChunkRepository(session).tail(silent) == (0, False)  # no log, nothing invented


async def test_logs_older_than_three_hours_are_pruned(
    loop_env: LoopEnv, maker: async_sessionmaker[AsyncSession]
) -> None:
    agent = await loop_env.agent()
    old = await add_run(loop_env, agent, background=True)
    new = await add_run(loop_env, agent, background=True)
    for run_id in (old, new):
        log = ChunkLog(maker, run_id)
        await log.write(chunk_log.DONE)
    async with maker() as session, session.begin():
        past = datetime.now(UTC) - timedelta(hours=3, minutes=1)
        await session.execute(update(orm.RunChunk).where(orm.RunChunk.run_id == old).values(created_at=past))
    assert await prune(maker) >= 1
    async with maker() as session:
        left = await session.scalars(select(orm.RunChunk.run_id).where(orm.RunChunk.run_id.in_([old, new])))
        assert list(left) == [new]


async def test_a_conversation_resume_selects_by_run_id_otid_or_the_newest_active_run(
    loop_env: LoopEnv, maker: async_sessionmaker[AsyncSession]
) -> None:
    agent = await loop_env.agent()
    actor = Actor(ids.DEFAULT_USER_ID, agent.organization_id)
    done = await add_run(loop_env, agent, background=True, status="completed", otids=["otid-a", "otid-b"])
    active = await add_run(loop_env, agent, background=True, conversation_id="conv-x")
    for run_id in (done, active):
        log = ChunkLog(maker, run_id)
        await log.write(f"data: {PING}\n\n")
        await log.write(chunk_log.DONE)

    async def read(req: RetrieveStreamRequest, **scope: str) -> list[str]:
        return [c async for c in await stream_selected(maker, actor, req, **scope)]

    by_otid = await read(RetrieveStreamRequest(otid="otid-b"), agent_id=agent.id)
    assert by_otid == [f"data: {PING.replace('null', '1')}\n\n", chunk_log.DONE]
    assert await read(RetrieveStreamRequest(run_id=active, starting_after=1)) == [chunk_log.DONE]
    newest = await select_run(maker, actor, conversation_id="conv-x")
    assert newest.id == active
    with pytest.raises(BadRequestError, match="No active runs found for this conversation"):
        await select_run(maker, actor, conversation_id="conv-empty")


async def test_idle_readers_share_one_poll_and_all_wake_on_a_new_chunk(
    loop_env: LoopEnv, maker: async_sessionmaker[AsyncSession]
) -> None:
    """50 quiet readers of one run cost one statement per 0.1 s tick (plus a status read a second), not 50, and a
    new chunk is read once for all of them."""
    run_id = await add_run(loop_env, await loop_env.agent(), background=True)
    statements: list[str] = []
    engine = maker.kw["bind"].sync_engine

    def record(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        statements.append(statement)

    async def read_all() -> list[str]:
        return [c async for c in follow(maker, run_id, include_pings=False)]

    first_reads = 0

    def own_read(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        nonlocal first_reads
        first_reads += statement.startswith("SELECT run_chunks.seq_id, run_chunks.data")

    event.listen(engine, "before_cursor_execute", own_read)
    readers = [asyncio.create_task(read_all()) for _ in range(50)]
    event.listen(engine, "before_cursor_execute", record)
    try:
        # Until every reader has read the empty log once (on a loaded machine some wait long for a new pool
        # connection, which sends no statement) and then a quiet 0.2 s window: readers polling on their own would
        # never give one.
        for _ in range(100):
            statements.clear()
            await asyncio.sleep(0.2)
            if first_reads >= 50 and len(statements) <= 3:
                break
        else:
            pytest.fail(f"the readers never went quiet: {first_reads} first reads, then {statements[:3]}")
        statements.clear()
        await asyncio.sleep(1.05)
    finally:
        event.remove(engine, "before_cursor_execute", record)
        event.remove(engine, "before_cursor_execute", own_read)
    assert 5 <= len(statements) <= 15, statements
    statements.clear()
    event.listen(engine, "before_cursor_execute", record)
    try:
        log = ChunkLog(maker, run_id)
        first = await log.write(f"data: {PING}\n\n")
        await log.write(chunk_log.DONE)
        results = await asyncio.wait_for(asyncio.gather(*readers), timeout=5)
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert all(r == [first, chunk_log.DONE] for r in results)
    # The poller read the new chunks once for all 50 readers; none of them read the table itself.
    own_reads = [s for s in statements if s.startswith("SELECT run_chunks.seq_id, run_chunks.data")]
    assert len(own_reads) < 5, len(own_reads)


async def test_a_live_reader_never_waits_for_the_log(
    loop_env: LoopEnv, maker: async_sessionmaker[AsyncSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain stream's chunks go to its reader before their log write (a slow database delays no byte), the
    response ends before the log's last write, and the log still holds every chunk, in order."""
    run_id = await add_run(loop_env, await loop_env.agent())
    original = RunChunkRepository.append

    async def slow(self: RunChunkRepository, run: str, chunks: Any) -> None:
        await asyncio.sleep(0.3)
        await original(self, run, chunks)

    monkeypatch.setattr(RunChunkRepository, "append", slow)
    pump = StreamPump(
        EventRenderer(run_id, ViewOptions(text_is_assistant=True)), ChunkLog(maker, run_id), include_pings=True
    )
    started = time.monotonic()
    await pump.start()  # the first ping: logged at once, as a chunk after a quiet spell
    ping = pump.live.get_nowait()
    assert '"message_type":"ping"' in ping and '"seq_id":1' in ping
    ending = asyncio.create_task(pump(END))  # the loop ended without its final event: an error tail, then [DONE]
    live = [ping]
    while (chunk := await pump.live.get()) is not None:
        live.append(chunk)
    assert time.monotonic() - started < 0.3, "the reader waited for a log write"
    assert not ending.done()  # the log's writes are still going on in the run's task
    await ending
    assert live[-1] == chunk_log.DONE and len(live) == 4
    assert [c async for c in follow(maker, run_id, starting_after=0)] == live


async def test_a_reader_in_the_writers_process_gets_each_batch_without_a_poll(
    loop_env: LoopEnv, maker: async_sessionmaker[AsyncSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A background stream read in the process that runs it: the writer hands each committed batch to the reader
    at once (the poller, which would take up to 0.1 s a batch, never ticks here)."""
    monkeypatch.setattr(chunk_watch, "POLL_S", 30.0)
    run_id = await add_run(loop_env, await loop_env.agent(), background=True)
    log = ChunkLog(maker, run_id)
    written = [await log.write(f"data: {PING}\n\n")]  # before the reader: read from the table
    reader = follow(maker, run_id, include_pings=False)
    started = time.monotonic()
    read = [await asyncio.wait_for(anext(reader), 2)]
    written += [log.append(f"data: {PING}\n\n"), log.append(f"data: {PING}\n\n"), log.append(chunk_log.DONE)]
    read += [await asyncio.wait_for(anext(reader), 2) for _ in range(3)]
    await log.close()
    assert read == written and read[-1] == chunk_log.DONE
    assert time.monotonic() - started < 1.0
    with pytest.raises(StopAsyncIteration):
        await anext(reader)


async def test_a_batch_the_readers_own_read_already_got_costs_no_second_read(
    loop_env: LoopEnv, maker: async_sessionmaker[AsyncSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race of a background stream's first read with the log's first write: the read returns the batch, then
    the writer hands the same batch over. The reader waits for the next batch without reading the table again."""
    monkeypatch.setattr(chunk_watch, "POLL_S", 30.0)
    run_id = await add_run(loop_env, await loop_env.agent(), background=True)
    log = ChunkLog(maker, run_id)
    first = await log.write(f"data: {PING}\n\n")  # committed before the reader's first read...
    reads = 0

    def own_read(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        nonlocal reads
        reads += statement.startswith("SELECT run_chunks.seq_id, run_chunks.data")

    engine = maker.kw["bind"].sync_engine
    event.listen(engine, "before_cursor_execute", own_read)
    try:
        reader = follow(maker, run_id, include_pings=False)
        assert await asyncio.wait_for(anext(reader), 2) == first
        # ...and handed over by its writer only now.
        chunk_watch.delivered(run_id, [Chunk(seq_id=1, data=first, final=False)])
        waiting = asyncio.create_task(anext(reader))
        await asyncio.sleep(0.2)
        assert not waiting.done() and reads == 1
        done = log.append(chunk_log.DONE)
        assert await asyncio.wait_for(waiting, 2) == done
        await log.close()
    finally:
        event.remove(engine, "before_cursor_execute", own_read)
    assert reads == 1


def test_a_watch_takes_chunks_handed_over_twice_once_and_none_after_a_gap() -> None:
    def batch(*seq_ids: int) -> list[Chunk]:
        return [Chunk(seq_id=s, data=f"c{s}", final=False) for s in seq_ids]

    watch = chunk_watch.ChunkWatch("run-1", last=3)
    watch.pending = [*batch(2, 4, 5), *batch(4, 5, 6)]  # the poller's read, then the writer's batch
    assert [c.seq_id for c in watch.take()] == [4, 5, 6] and watch.pending == []
    watch.last = 6  # the reader sent them
    watch.pending = batch(5, 6)  # only chunks already taken: nothing new, and nothing to read
    assert watch.take() == []
    watch.pending = batch(8, 9)  # chunk 7 is missing: the reader reads the table instead
    assert watch.take() is None
    assert watch.take() is None  # nothing handed over: the same
