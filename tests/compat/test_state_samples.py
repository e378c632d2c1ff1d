"""Responses compared with what Letta 0.16.8 sent (../shared/letta/samples): same keys, same value types, nulls.

Null is compared like any other value: null against non-null is a difference. Lists are compared item by item
(each item against its counterpart by message type, name, label or handle), and an empty list against a non-empty one is a
difference. Ids must carry the same prefix. The samples' values that depend on what happened to the agent (its
`last_stop_reason`) are reproduced by doing the same thing first, not skipped.
"""

import json
from collections.abc import Iterable
from typing import Any

import httpx

from tests.mock_llm import MockLLM, Reply
from tests.shared_paths import SAMPLES

CURL = {"user-agent": "curl/8.5.0"}  # a pre-1.0 client: Letta returned every relationship


def sample(name: str) -> Any:
    return json.loads((SAMPLES / name).read_text())


def shape_differences(ours: Any, theirs: Any, path: str = "$") -> list[str]:
    """Every place where `ours` differs in shape from Letta's `theirs`: keys, types, nulls, list items, id prefixes."""
    if theirs is None or ours is None:
        return [] if ours is theirs else [f"{path}: {_kind(ours)} vs Letta's {_kind(theirs)}"]
    if isinstance(theirs, dict):
        if not isinstance(ours, dict):
            return [f"{path}: {_kind(ours)} vs Letta's object"]
        found = [f"{path}: keys differ: +{sorted(set(ours) - set(theirs))} -{sorted(set(theirs) - set(ours))}"]
        found = found if set(ours) != set(theirs) else []
        for key in theirs.keys() & ours.keys():
            found += shape_differences(ours[key], theirs[key], f"{path}.{key}")
        return found
    if isinstance(theirs, list):
        if not isinstance(ours, list):
            return [f"{path}: {_kind(ours)} vs Letta's list"]
        if bool(ours) != bool(theirs):
            return [f"{path}: {len(ours)} items vs Letta's {len(theirs)}"]
        found = []
        # Letta's order of tools and blocks is not stable; pair items by message type, name, label or handle.
        # Both ways, so that every item on each side is compared with its counterpart.
        for item in ours:
            found += shape_differences(item, _partner(item, theirs), f"{path}[]")
        for item in theirs:
            found += shape_differences(_partner(item, ours), item, f"{path}[]")
        return sorted(set(found))
    if isinstance(theirs, bool) or isinstance(ours, bool):
        return [] if type(ours) is type(theirs) else [f"{path}: {ours!r} vs Letta's {theirs!r}"]
    if isinstance(theirs, int | float):
        return [] if isinstance(ours, int | float) else [f"{path}: {ours!r} is not a number"]
    if type(ours) is not type(theirs):
        return [f"{path}: {_kind(ours)} vs Letta's {_kind(theirs)}"]
    prefix = theirs.split("-")[0] if isinstance(theirs, str) and "-" in theirs else None
    if prefix in ID_PREFIXES and ours.split("-")[0] != prefix:
        return [f"{path}: id prefix {ours!r} vs Letta's {theirs!r}"]
    return []


ID_PREFIXES = {"agent", "block", "tool", "message", "run", "step", "user", "org", "organization", "provider"}


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def assert_same_shape(ours: Any, theirs: Any, deliberate: Iterable[str] = ()) -> None:
    """No shape difference but the `deliberate` ones (exact messages of `shape_differences`, each with its reason)."""
    found = [d for d in shape_differences(ours, theirs) if d not in set(deliberate)]
    assert not found, "\n".join(found)


# Letta's GET /v1/runs/{id} leaves `total_duration_ns` null (it does not read its run-metrics table there, while its
# list of runs does); memlet reports the duration it recorded in both places, as the field's description promises.
RUN_DURATION = "$.total_duration_ns: int vs Letta's null"


def _partner(item: Any, others: list[Any]) -> Any:
    for key in ("message_type", "name", "label", "handle"):
        if isinstance(item, dict) and item.get(key) is not None:
            for candidate in others:
                if isinstance(candidate, dict) and candidate.get(key) == item[key]:
                    return candidate
    return others[0]


def create_sample_agent(http: httpx.Client) -> dict[str, Any]:
    response = http.post("/v1/agents/", json=sample("create_agent_request.json"), headers=CURL)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def talked_to_sample_agent(http: httpx.Client, mock_llm: MockLLM) -> dict[str, Any]:
    """The sample agent after one turn, as Letta's agent samples were taken (they have a `last_stop_reason`)."""
    agent = create_sample_agent(http)
    mock_llm.reset()
    mock_llm.script(Reply.text("Hello Bob!"))
    sent = http.post(f"/v1/agents/{agent['id']}/messages", json={"messages": [{"role": "user", "content": "hi"}]})
    assert sent.status_code == 200, sent.text
    return agent


def test_health(http: httpx.Client) -> None:
    assert http.get("/v1/health/").json() == sample("health.json")


def test_create_agent_response(http: httpx.Client) -> None:
    assert_same_shape(create_sample_agent(http), sample("create_agent_response.json"))


def test_agent_state_with_every_relationship(http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = talked_to_sample_agent(http, mock_llm)
    assert_same_shape(http.get(f"/v1/agents/{agent['id']}", headers=CURL).json(), sample("agent_state.json"))


def test_list_agents(http: httpx.Client, mock_llm: MockLLM) -> None:
    talked_to_sample_agent(http, mock_llm)
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


def _turn(http: httpx.Client, agent_id: str, text: str) -> dict[str, Any]:
    response = http.post(f"/v1/agents/{agent_id}/messages", json={"messages": [{"role": "user", "content": text}]})
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_send_message_responses(http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = create_sample_agent(http)
    mock_llm.reset()
    mock_llm.script(Reply.text("Hello Bob!"))
    assert_same_shape(_turn(http, agent["id"], "hi"), sample("letta_response.json"))
    edit = {"label": "human", "old_string": "Bob likes chess.", "new_string": "Bob likes go."}
    mock_llm.script(Reply.tool_call("memory_replace", edit), Reply.text("Noted."))
    assert_same_shape(_turn(http, agent["id"], "I like go now"), sample("letta_response_tool_call.json"))


def test_runs_steps_and_history(http: httpx.Client, mock_llm: MockLLM) -> None:
    agent = create_sample_agent(http)
    mock_llm.reset()
    mock_llm.script(Reply.text("Hello Bob!"))
    run_id = _turn(http, agent["id"], "hi")["messages"][0]["run_id"]
    edit = {"label": "human", "old_string": "Bob likes chess.", "new_string": "Bob likes go."}
    mock_llm.script(Reply.tool_call("memory_replace", edit), Reply.text("Noted."))
    _turn(http, agent["id"], "I like go now")
    assert_same_shape(http.get(f"/v1/runs/{run_id}").json(), sample("run.json"), deliberate=[RUN_DURATION])
    assert_same_shape(http.get("/v1/runs/", params={"agent_id": agent["id"]}).json(), sample("list_runs.json"))
    assert_same_shape(http.get(f"/v1/runs/{run_id}/steps").json(), sample("run_steps.json"))
    assert_same_shape(http.get(f"/v1/runs/{run_id}/messages").json(), sample("run_messages.json"))
    history = http.get(f"/v1/agents/{agent['id']}/messages", params={"order": "asc", "limit": 50}).json()
    assert_same_shape(history, sample("list_messages.json"))
