"""Slow turns do not starve the API: 50 turns waiting on a slow LLM, plain reads stay fast; past the turn limit,
a fast 429 with Retry-After instead of a pool timeout."""

import statistics
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from memlet.config import Settings
from tests.conftest import LiveServer, reset_database
from tests.mock_llm import MockLLM, Reply

TURNS = 50
LLM_DELAY_S = 6.0


def own_server(settings: Settings, pg_uri: str, llm: MockLLM, **overrides: object) -> Iterator[LiveServer]:
    update = {"llm_timeout_s": 30, "openai_base_url": llm.base_url, **overrides}
    server = LiveServer(settings.model_copy(update=update)).start()
    try:
        yield server
    finally:
        server.stop()
        reset_database(pg_uri)


MISSING = "agent-00000000-0000-4000-8000-000000000001"


@pytest.fixture
def slow_llm() -> Iterator[MockLLM]:
    """A mock LLM of these tests' own: no request left over from another test can take one of their replies."""
    mock = MockLLM.start()
    try:
        yield mock
    finally:
        mock.stop()


@pytest.fixture
def roomy(settings: Settings, pg_uri: str, slow_llm: MockLLM) -> Iterator[LiveServer]:
    # Its 50 turns hold 51 connections of the turn pool; an API pool of 6 (not 20) leaves room, within Postgres'
    # default max_connections of 100, for the idle connections the session's shared server keeps (up to 30). The
    # reads must still be fast through those 6: a turn waiting on the LLM holds no API connection.
    yield from own_server(settings, pg_uri, slow_llm, pg_pool_size=3, pg_max_overflow=3)


@pytest.fixture
def tight(settings: Settings, pg_uri: str, slow_llm: MockLLM) -> Iterator[LiveServer]:
    yield from own_server(settings, pg_uri, slow_llm, max_concurrent_turns=3)


def make_agents(http: httpx.Client, count: int) -> list[str]:
    ids = []
    for i in range(count):
        response = http.post("/v1/agents/", json={"name": f"load-{i}", "model": "openai/gpt-4o-mini"})
        assert response.status_code == 200, response.text
        ids.append(response.json()["id"])
    return ids


def send(base_url: str, agent_id: str, path: str = "messages") -> httpx.Response:
    with httpx.Client(base_url=base_url, timeout=120) as own:
        body = {"messages": [{"role": "user", "content": "take your time"}]}
        return own.post(f"/v1/agents/{agent_id}/{path}", json=body)


def wait_for_llm_requests(mock: MockLLM, count: int, timeout_s: float = 20) -> int:
    """How many turns reached the LLM, waiting until `count` did (or the timeout)."""
    deadline = time.monotonic() + timeout_s
    while len(mock.requests) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return len(mock.requests)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def test_reads_stay_fast_while_50_turns_wait_on_a_slow_llm(roomy: LiveServer, slow_llm: MockLLM) -> None:
    slow_llm.reset()
    with httpx.Client(base_url=roomy.base_url, timeout=60) as http:
        agents = make_agents(http, TURNS)
        slow_llm.script(*[Reply.delay(LLM_DELAY_S, then=Reply.text("slow answer"))] * TURNS)
        with ThreadPoolExecutor(TURNS) as pool:
            sends = [pool.submit(send, roomy.base_url, agent) for agent in agents]
            # Every turn now waits on the LLM, holding its agent lock (a starved server gets fewer this far).
            wait_for_llm_requests(slow_llm, 1)
            first_reached = time.monotonic()
            reached = wait_for_llm_requests(slow_llm, TURNS, timeout_s=LLM_DELAY_S)
            spread_s = time.monotonic() - first_reached
            latencies, statuses = [], []
            # Until the first turn's answer is due, every turn is in flight (however long the last took to start).
            window_end = first_reached + LLM_DELAY_S - 1.0
            while time.monotonic() < window_end:
                started = time.perf_counter()
                try:
                    response = http.get("/v1/agents/", params={"limit": 10}, timeout=10)
                except httpx.TimeoutException:
                    response = httpx.Response(599)
                latencies.append((time.perf_counter() - started) * 1000)
                statuses.append(response.status_code)
            still_waiting = sum(not s.done() for s in sends)
            codes = [s.result().status_code for s in sends]
    p50, p99 = statistics.median(latencies), percentile(latencies, 0.99)
    print(
        f"\nGET /v1/agents during {TURNS} slow turns (all reached the LLM within {spread_s:.2f} s): "
        f"n={len(latencies)} p50={p50:.1f} ms p99={p99:.1f} ms"
    )
    assert reached == TURNS
    assert still_waiting == TURNS  # the reads were measured while every turn was still in flight
    assert statuses == [200] * len(statuses)
    assert len(latencies) >= 10
    assert p99 < 100
    assert codes == [200] * TURNS


def test_past_the_turn_limit_a_fast_429_with_retry_after(tight: LiveServer, slow_llm: MockLLM) -> None:
    slow_llm.reset()
    with httpx.Client(base_url=tight.base_url, timeout=60) as http:
        agents = make_agents(http, 5)
        slow_llm.script(*[Reply.delay(LLM_DELAY_S, then=Reply.text("slow answer"))] * 3)
        with ThreadPoolExecutor(3) as pool:
            busy = [pool.submit(send, tight.base_url, agent) for agent in agents[:3]]
            assert wait_for_llm_requests(slow_llm, 3) == 3
            started = time.perf_counter()
            rejected = send(tight.base_url, agents[3])
            rejected_ms = (time.perf_counter() - started) * 1000
            rejected_async = send(tight.base_url, agents[4], "messages/async")
            unknown = send(tight.base_url, MISSING)  # a full worker still answers an unknown agent's 404 first
            runs = http.get("/v1/runs/", params={"agent_id": agents[3]}).json()
            codes = [b.result().status_code for b in busy]
    print(f"\n429 past the turn limit answered in {rejected_ms:.1f} ms")
    assert rejected.status_code == 429, rejected.text
    assert rejected.headers["retry-after"] == "1"
    assert "MEMLET_MAX_CONCURRENT_TURNS" in rejected.json()["detail"]
    assert rejected_ms < 500
    assert rejected_async.status_code == 429
    assert unknown.status_code == 404, unknown.text
    assert runs == []  # nothing was written for the rejected turn
    assert codes == [200] * 3
    assert send(tight.base_url, agents[3]).status_code == 200  # the slots came back


def test_sends_to_an_unknown_agent_give_their_slot_back(tight: LiveServer, slow_llm: MockLLM) -> None:
    """Their run's INSERT finds no agent (a 404, nothing written) after the send reserved a slot."""
    slow_llm.reset()
    with httpx.Client(base_url=tight.base_url, timeout=60) as http:
        agent = make_agents(http, 1)[0]
        codes = [send(tight.base_url, MISSING).status_code for _ in range(4)]
        assert codes == [404] * 4
        assert http.get("/v1/runs/").json() == []
        slow_llm.script(Reply.text("hi"))
        assert send(tight.base_url, agent).status_code == 200


def test_failed_turns_give_their_slot_back(tight: LiveServer, slow_llm: MockLLM) -> None:
    slow_llm.reset()
    with httpx.Client(base_url=tight.base_url, timeout=60) as http:
        agent = make_agents(http, 1)[0]
        slow_llm.script(Reply.error(status=400, times=4))
        codes = [send(tight.base_url, agent).status_code for _ in range(4)]
        assert all(code >= 400 and code != 429 for code in codes), codes
        assert send(tight.base_url, agent).status_code == 200  # four failures later, a slot is still free
