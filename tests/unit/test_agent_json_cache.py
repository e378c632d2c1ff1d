"""The listed agents' JSON cache is bounded by bytes (least recently used first) and answers only for the key its
entry was built from."""

from memlet.agents.json_cache import AgentJsonCache, AgentKey

KEY: AgentKey = (7, (("block-1", 3),), ("tag",), frozenset({"agent.blocks"}))


def test_an_entry_answers_only_for_its_key() -> None:
    cache = AgentJsonCache(max_bytes=1000)
    cache.put("agent-1", KEY, b"{head", b"tail}")
    assert cache.get("agent-1", KEY) == (b"{head", b"tail}") and cache.hits == 1
    assert cache.get("agent-1", (8, *KEY[1:])) is None
    assert cache.get("agent-2", KEY) is None and cache.hits == 1


def test_the_least_recently_used_go_first_and_the_size_stays_under_the_bound() -> None:
    cache = AgentJsonCache(max_bytes=350)
    for n in range(3):
        cache.put(f"agent-{n}", KEY, b"h" * 50, b"t" * 50)
    assert cache.size == 300
    cache.get("agent-0", KEY)  # now the most recently used
    cache.put("agent-1", KEY, b"h" * 60, b"t" * 60)  # replaced: 320 bytes
    assert cache.size == 320
    cache.put("agent-3", KEY, b"h" * 25, b"t" * 25)  # 370 > 350: agent-2 (least recent) goes
    assert cache.get("agent-2", KEY) is None and cache.get("agent-0", KEY) is not None
    assert cache.size == 270
    cache.put("agent-4", KEY, b"h" * 200, b"t" * 200)  # larger than the whole cache: not kept
    assert cache.get("agent-4", KEY) is None and cache.size == 270


def test_a_page_read_before_a_deletion_does_not_put_the_agent_back() -> None:
    cache = AgentJsonCache(max_bytes=1000)
    before = cache.deleted.now()  # a page is read ...
    cache.forget_agent("agent-1")  # ... the agent is deleted meanwhile ...
    cache.parts("agent-1", KEY, lambda: (b"{head", b"tail}"), before)  # ... and the page is built
    assert "agent-1" not in cache
    cache.parts("agent-2", KEY, lambda: (b"{head", b"tail}"), before)  # another agent of that page is kept
    assert "agent-2" in cache
    cache.parts("agent-1", KEY, lambda: (b"{head", b"tail}"), cache.deleted.now())  # read after: kept (same id)
    assert "agent-1" in cache
