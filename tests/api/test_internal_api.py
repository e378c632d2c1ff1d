"""Letta's ``/v1/_internal_*`` agent, block and run routes and the deprecated ``GET /v1/telemetry/{step_id}``,
through httpx against the live server (letta-client has no methods for them)."""

import httpx

from tests.api.test_core_memory_api import system_prompt

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
MISSING_BLOCK = "block-00000000-0000-4000-8000-000000000000"


def make_agent(http: httpx.Client, name: str, **extra: object) -> dict:  # type: ignore[type-arg]
    body = {"name": name, "model": MODEL, "embedding": EMBEDDING, "memory_blocks": [{"label": "human", "value": "Bob"}]}
    resp = http.post("/v1/agents/", json=body | extra)
    assert resp.status_code == 200, resp.text
    return resp.json()  # type: ignore[no-any-return]


class TestInternalAgents:
    def test_count_excludes_hidden_by_default(self, http: httpx.Client) -> None:
        make_agent(http, "shown")
        make_agent(http, "hidden", hidden=True)
        assert http.get("/v1/_internal_agents/count").json() == 1
        assert http.get("/v1/_internal_agents/count", params={"exclude_hidden": "false"}).json() == 2
        assert http.get("/v1/agents/count").json() == 1  # Letta's public count leaves them out too
        assert http.get("/v1/agents/count", params={"show_hidden_agents": "true"}).json() == 2

    def test_count_rejects_bad_flag(self, http: httpx.Client) -> None:
        assert http.get("/v1/_internal_agents/count", params={"exclude_hidden": "maybe"}).status_code == 422

    def test_modify_core_memory_block_rebuilds_prompt(self, http: httpx.Client, pg_uri: str) -> None:
        agent = make_agent(http, "editor")
        resp = http.patch(f"/v1/_internal_agents/{agent['id']}/core-memory/blocks/human", json={"value": "Alice"})
        assert resp.status_code == 200, resp.text
        block = resp.json()
        assert block["label"] == "human" and block["value"] == "Alice" and block["id"].startswith("block-")
        assert "Alice" in system_prompt(pg_uri, agent["id"])

    def test_modify_unknown_label_is_404(self, http: httpx.Client) -> None:
        agent = make_agent(http, "editor")
        resp = http.patch(f"/v1/_internal_agents/{agent['id']}/core-memory/blocks/nope", json={"value": "x"})
        assert resp.status_code == 404
        assert "detail" in resp.json()


class TestInternalBlocks:
    def test_create_list_delete(self, http: httpx.Client) -> None:
        resp = http.post("/v1/_internal_blocks/", json={"label": "notes", "value": "hello"})
        assert resp.status_code == 200, resp.text
        block = resp.json()
        assert block["label"] == "notes" and block["value"] == "hello"
        listed = http.get("/v1/_internal_blocks/", params={"label": "notes"}).json()
        assert [b["id"] for b in listed] == [block["id"]]
        assert http.delete(f"/v1/_internal_blocks/{block['id']}").status_code == 200
        assert http.get(f"/v1/blocks/{block['id']}").status_code == 404
        assert http.get("/v1/_internal_blocks/", params={"label": "notes"}).json() == []

    def test_delete_missing_is_404(self, http: httpx.Client) -> None:
        assert http.delete(f"/v1/_internal_blocks/{MISSING_BLOCK}").status_code == 404

    def test_agents_for_block(self, http: httpx.Client) -> None:
        agent = make_agent(http, "holder")
        make_agent(http, "other")
        block_id = agent["memory"]["blocks"][0]["id"]
        resp = http.get(f"/v1/_internal_blocks/{block_id}/agents")
        assert resp.status_code == 200, resp.text
        assert [a["id"] for a in resp.json()] == [agent["id"]]
        assert http.get(f"/v1/_internal_blocks/{MISSING_BLOCK}/agents").status_code == 404


class TestInternalRuns:
    def test_lists_runs_with_filters(self, http: httpx.Client, mock_llm: object) -> None:
        agent = make_agent(http, "runner")
        sent = http.post(f"/v1/agents/{agent['id']}/messages", json={"messages": [{"role": "user", "content": "hi"}]})
        assert sent.status_code == 200, sent.text
        runs = http.get("/v1/_internal_runs/", params={"agent_id": agent["id"]}).json()
        assert len(runs) == 1 and runs[0]["agent_id"] == agent["id"] and runs[0]["id"].startswith("run-")
        assert runs[0]["status"] == "completed"
        assert http.get("/v1/_internal_runs/", params={"statuses": ["running"]}).json() == []

    def test_bad_limit_is_422(self, http: httpx.Client) -> None:
        assert http.get("/v1/_internal_runs/", params={"limit": 0}).status_code == 422


class TestTelemetry:
    def test_provider_trace_is_the_steps(self, http: httpx.Client, mock_llm: object) -> None:
        agent = make_agent(http, "traced")
        http.post(f"/v1/agents/{agent['id']}/messages", json={"messages": [{"role": "user", "content": "hi"}]})
        step = http.get("/v1/steps/", params={"agent_id": agent["id"]}).json()[0]
        resp = http.get(f"/v1/telemetry/{step['id']}")
        assert resp.status_code == 200 and resp.json()["step_id"] == step["id"]
        assert resp.json() == http.get(f"/v1/steps/{step['id']}/trace").json()
        assert http.get("/v1/telemetry/anything").json() is None
