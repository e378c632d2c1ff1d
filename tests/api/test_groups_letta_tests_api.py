"""What Letta 0.16.8's group tests (`tests/test_multi_agent.py`: `test_list_agent_groups`) pin down that a user of
``GET /v1/agents/{id}/groups`` relies on: every group the agent takes part in is listed. memlet's cursors there are
relative to the sort order, so a page walk visits each group once (README, compatibility notes)."""

import httpx
from letta_client import Letta

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"


def group_ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [g["id"] for g in response.json()]


def new_group(http: httpx.Client, *members: str) -> str:
    response = http.post("/v1/groups/", json={"agent_ids": list(members), "description": ""})
    assert response.status_code == 200, response.text
    return str(response.json()["id"])


def test_a_page_walk_of_an_agents_groups_visits_each_once_in_order(http: httpx.Client, client: Letta) -> None:
    # Letta compared the cursors with group ids, which are random, whatever the order, so a walk skipped or
    # repeated groups.
    a, b = (client.agents.create(name=n, model=MODEL, embedding=EMBEDDING).id for n in "ab")
    groups = [new_group(http, a, b) if i % 2 else new_group(http, a) for i in range(6)]
    for order, expected in (("desc", groups[::-1]), ("asc", groups)):
        seen: list[str] = []
        params: dict[str, str | int] = {"order": order, "limit": 2}
        while page := group_ids(http.get(f"/v1/agents/{a}/groups", params=params)):
            seen += page
            params["after"] = page[-1]
        assert seen == expected
    newest_first = groups[::-1]
    assert group_ids(http.get(f"/v1/agents/{a}/groups", params={"before": groups[0]})) == newest_first[:-1]
    assert group_ids(http.get(f"/v1/agents/{b}/groups")) == [groups[5], groups[3], groups[1]]


def test_a_repeated_participant_is_a_400_for_every_pattern(http: httpx.Client, client: Letta) -> None:
    # Letta refused it so only for a dynamic group; any other group got a 404 "Items not found in agents: set()"
    # (README, compatibility notes).
    a = client.agents.create(model=MODEL, embedding=EMBEDDING).id
    boss = client.agents.create(model=MODEL, embedding=EMBEDDING).id
    for config in ({}, {"manager_config": {"manager_type": "supervisor", "manager_agent_id": boss}}):
        response = http.post("/v1/groups/", json={"agent_ids": [a, a], "description": "", **config})
        assert response.status_code == 400
        assert response.json() == {"detail": "Duplicate agent ids found in list"}
    group = new_group(http, a)
    response = http.patch(f"/v1/groups/{group}", json={"agent_ids": [a, a]})
    assert (response.status_code, response.json()) == (400, {"detail": "Duplicate agent ids found in list"})
    assert http.get("/v1/groups/count").json() == 1


def test_a_group_keeps_the_project_id_it_is_modified_with(http: httpx.Client, client: Letta) -> None:
    # Letta 0.16.8 stored no project_id on create or modify (README, compatibility notes).
    a = client.agents.create(model=MODEL, embedding=EMBEDDING).id
    group = new_group(http, a)
    assert http.patch(f"/v1/groups/{group}", json={"project_id": "p2"}).json()["project_id"] == "p2"
    assert group_ids(http.get("/v1/groups/", params={"project_id": "p2"})) == [group]


def test_a_patch_leaves_the_shared_blocks_as_they_are(http: httpx.Client, client: Letta) -> None:
    # Letta's modify ignores the deprecated `shared_block_ids`; the attach/detach routes change them.
    a = client.agents.create(model=MODEL, embedding=EMBEDDING).id
    block = client.blocks.create(label="team", value="shared").id
    group = new_group(http, a)
    missing = "block-00000000-0000-4000-8000-000000000000"
    for ids in ([block], [missing]):
        response = http.patch(f"/v1/groups/{group}", json={"shared_block_ids": ids, "description": "d"})
        assert response.status_code == 200, response.text
        assert (response.json()["shared_block_ids"], response.json()["description"]) == ([], "d")
    assert http.get(f"/v1/groups/{group}").json()["shared_block_ids"] == []
