"""A plain stream's reader (`StreamPump.live_chunks`): chunks already waiting go to the client in one write, in
order; a silent stream gets keep-alive pings; the end ends it."""

import asyncio
import json

import pytest

from memlet.turns import stream_pump
from memlet.turns.chunk_log import ChunkLog
from memlet.turns.stream_pump import StreamPump
from memlet.turns.streaming import EventRenderer, ViewOptions


def pump(*, pings: bool) -> StreamPump:
    renderer = EventRenderer("run-live", ViewOptions(text_is_assistant=True))
    return StreamPump(renderer, ChunkLog(None, "run-live"), include_pings=pings)  # type: ignore[arg-type]


def chunk(n: int) -> str:
    return f"data: {json.dumps({'n': n})}\n\n"


async def test_waiting_chunks_go_out_together_and_in_order() -> None:
    live = pump(pings=False)
    for n in range(5):
        live.live.put_nowait(chunk(n))
    live.live.put_nowait(None)
    writes = [w async for w in live.live_chunks()]
    assert writes == ["".join(chunk(n) for n in range(5))]


async def test_chunks_arriving_one_by_one_go_out_one_by_one() -> None:
    live = pump(pings=False)

    async def produce() -> None:
        for n in range(3):
            await asyncio.sleep(0.01)
            live.live.put_nowait(chunk(n))
        await asyncio.sleep(0.01)
        live.live.put_nowait(None)

    producer = asyncio.create_task(produce())
    writes = [w async for w in live.live_chunks()]
    await producer
    assert writes == [chunk(0), chunk(1), chunk(2)]


async def test_a_silent_stream_is_pinged_until_its_next_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream_pump, "KEEPALIVE_INTERVAL_S", 0.05)
    live = pump(pings=True)
    asyncio.get_running_loop().call_later(0.12, live.live.put_nowait, chunk(7))
    asyncio.get_running_loop().call_later(0.13, live.live.put_nowait, None)
    writes = [w async for w in live.live_chunks()]
    assert len(writes) >= 3
    assert all('"message_type":"ping"' in w for w in writes[:-1])
    assert writes[-1] == chunk(7)
