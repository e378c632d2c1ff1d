"""Responses compared with what Letta 0.16.8 sent (../shared/letta/samples): same keys, same value types, nulls.

A value's type must match the sample's wherever the sample has a non-null value; ids must carry the same prefix.
"""

import json
from pathlib import Path
from typing import Any

import httpx

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "letta" / "samples"
CURL = {"user-agent": "curl/8.5.0"}  # a pre-1.0 client: Letta returned every relationship


def sample(name: str) -> Any:
    return json.loads((SAMPLES / name).read_text())


def assert_same_shape(ours: Any, theirs: Any, path: str = "$") -> None:
    if theirs is None or ours is None:
        return
    if isinstance(theirs, dict):
        assert isinstance(ours, dict), f"{path}: expected an object"
        assert set(ours) == set(theirs), f"{path}: keys differ: +{set(ours) - set(theirs)} -{set(theirs) - set(ours)}"
        for key in theirs:
            assert_same_shape(ours[key], theirs[key], f"{path}.{key}")
    elif isinstance(theirs, list):
        assert isinstance(ours, list), f"{path}: expected a list"
        if theirs and ours:
            # Letta's order of tools and blocks is not stable; pair items by name or label when they have one.
            for i, item in enumerate(ours):
                assert_same_shape(item, _partner(item, theirs), f"{path}[{i}]")
    elif isinstance(theirs, bool) or isinstance(ours, bool):
        assert type(ours) is type(theirs), f"{path}: {ours!r} vs {theirs!r}"
    elif isinstance(theirs, int | float):
        assert isinstance(ours, int | float), f"{path}: {ours!r} is not a number"
    else:
        assert type(ours) is type(theirs), f"{path}: {type(ours).__name__} vs {type(theirs).__name__}"
        if isinstance(theirs, str) and "-" in theirs and theirs.split("-")[0] in {"agent", "block", "tool", "message"}:
            assert ours.split("-")[0] == theirs.split("-")[0], f"{path}: id prefix {ours!r} vs {theirs!r}"


def _partner(item: Any, theirs: list[Any]) -> Any:
    for key in ("name", "label"):
        if isinstance(item, dict) and key in item:
            for candidate in theirs:
                if isinstance(candidate, dict) and candidate.get(key) == item[key]:
                    return candidate
    return theirs[0]


def create_sample_agent(http: httpx.Client) -> dict[str, Any]:
    response = http.post("/v1/agents/", json=sample("create_agent_request.json"), headers=CURL)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_health(http: httpx.Client) -> None:
    assert http.get("/v1/health/").json() == sample("health.json")


def test_create_agent_response(http: httpx.Client) -> None:
    assert_same_shape(create_sample_agent(http), sample("create_agent_response.json"))


def test_agent_state_with_every_relationship(http: httpx.Client) -> None:
    agent = create_sample_agent(http)
    assert_same_shape(http.get(f"/v1/agents/{agent['id']}", headers=CURL).json(), sample("agent_state.json"))


def test_list_agents(http: httpx.Client) -> None:
    create_sample_agent(http)
    ours = http.get("/v1/agents/", headers=CURL).json()
    assert isinstance(ours, list)
    assert_same_shape(ours, sample("list_agents.json"))


def test_blocks_of_agent_and_block_edit(http: httpx.Client) -> None:
    agent = create_sample_agent(http)
    blocks = http.get(f"/v1/agents/{agent['id']}/core-memory/blocks").json()
    assert_same_shape(blocks, sample("list_blocks_of_agent.json"))
    edited = http.patch(f"/v1/agents/{agent['id']}/core-memory/blocks/human", json={"value": "The human is Ann."})
    assert edited.status_code == 200
    assert_same_shape(edited.json(), sample("block_after_edit.json"))


def test_models(http: httpx.Client) -> None:
    assert_same_shape(http.get("/v1/models/").json(), sample("list_models.json"))
    assert_same_shape(http.get("/v1/models/embedding").json(), sample("list_embedding_models.json"))


def test_404_agent(http: httpx.Client) -> None:
    expected = sample("error_404_agent.json")
    response = http.get("/v1/agents/agent-00000000-0000-4000-8000-000000000000")
    assert response.status_code == expected["status"]
    assert response.json() == expected["body"]
