"""``AgentState.managed_group`` (and its deprecated twin ``multi_agent_group``) through letta-client."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from letta_client import Letta
from sqlalchemy import event
from sqlalchemy.engine import Engine

from tests.api.sleeptime_support import EMBEDDING, MODEL, groups, make_main, sleeptime_of
from tests.api.sql_tasks import is_cancel_poll, task_name

INCLUDE = ["agent.managed_group"]


@contextmanager
def statements() -> Iterator[list[str]]:
    """Every SQL statement the live server (same process) sends for requests while the block runs: from a request's
    task ("Task-<n>"), not from the background tasks that may run at any moment (the run-lease sweep, the sleeptime
    queue's poll, the message indexer: each a named task; the cancel watch, known by its statement)."""
    seen: list[str] = []

    def record(*args: Any) -> None:
        if task_name().startswith("Task-") and not is_cancel_poll(str(args[2])):
            seen.append(str(args[2]))

    event.listen(Engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(Engine, "before_cursor_execute", record)


def test_a_sleeptime_main_agent_shows_its_group(client: Letta, http: httpx.Client) -> None:
    main = make_main(client)
    (group,) = groups(http)
    helper = sleeptime_of(client, main)
    # As in Letta, the create response carries the group the new agent manages.
    assert main.managed_group is not None
    assert main.managed_group.model_dump() == group
    assert main.managed_group.agent_ids == [helper.id]
    assert main.multi_agent_group is not None and main.multi_agent_group.id == group["id"]
    got = client.agents.retrieve(main.id, include=INCLUDE)
    assert got.managed_group is not None and got.managed_group.model_dump() == group
    # letta-client 1.x gets relationships only when it names them.
    assert client.agents.retrieve(main.id).managed_group is None
    # The legacy parameter and name, as pre-1.0 clients send them.
    legacy = http.get(f"/v1/agents/{main.id}", params={"include_relationships": ["multi_agent_group"]}).json()
    assert legacy["managed_group"]["id"] == legacy["multi_agent_group"]["id"] == group["id"]
    # A modify response carries it too.
    assert client.agents.update(main.id, description="d").managed_group is not None
    # The sleeptime agent takes part in the group but does not manage it.
    assert client.agents.retrieve(helper.id, include=INCLUDE).managed_group is None


def test_a_plain_agent_shows_null(client: Letta) -> None:
    agent = client.agents.create(name="plain", model=MODEL, embedding=EMBEDDING)
    assert agent.managed_group is None and agent.multi_agent_group is None
    got = client.agents.retrieve(agent.id, include=INCLUDE)
    assert got.managed_group is None and got.multi_agent_group is None


def test_list_reads_the_groups_of_a_page_at_once(client: Letta, http: httpx.Client) -> None:
    mains = [make_main(client, f"main{i}") for i in range(3)]
    by_manager = {g["manager_agent_id"]: g for g in groups(http)}

    def page(limit: int) -> tuple[list[Any], list[str]]:
        with statements() as seen:
            agents = client.agents.list(limit=limit, include=INCLUDE).items
        return agents, [s for s in seen if "groups" in s]

    # The newest agent is the last sleeptime agent, so the small page holds one manager too.
    small, small_sql = page(2)
    assert small[1].managed_group is not None
    large, large_sql = page(6)
    assert len(large) == 6
    for agent in large:
        expected = by_manager.get(agent.id)
        assert (agent.managed_group.model_dump() if agent.managed_group else None) == expected
    assert {a.id for a in large if a.managed_group} == {m.id for m in mains}
    # The page's own statement (its manager flag), then the groups, their members and their shared blocks.
    assert 0 < len(small_sql) == len(large_sql) <= 4
    # Without the include, no group is read at all.
    with statements() as seen:
        plain = client.agents.list(limit=6).items
    assert all(a.managed_group is None for a in plain)
    assert not [s for s in seen if "FROM groups" in s]


def test_a_page_without_managers_reads_no_group_rows(client: Letta) -> None:
    for i in range(3):
        client.agents.create(name=f"plain{i}", model=MODEL, embedding=EMBEDDING)
    with statements() as seen:
        agents = client.agents.list(limit=3, include=[*INCLUDE, "agent.blocks", "agent.tools", "agent.tags"]).items
    assert [a.managed_group for a in agents] == [None, None, None]
    # The page with its links and manager flag, its blocks, its tools: no statement of its own for the groups.
    assert len(seen) == 3, seen
    assert not [s for s in seen if "DISTINCT ON (groups.manager_agent_id)" in s]
