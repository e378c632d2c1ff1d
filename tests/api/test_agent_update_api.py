"""PATCH /v1/agents/{id} as Letta 0.16.8 applies it: what a null, a partial object or a list changes."""

import httpx
from letta_client import Letta

from tests.api.test_agents_api import EMBEDDING, MODEL

# Everything but the timestamps an update always moves.
CHANGING = {"updated_at", "last_updated_by_id"}


def _full(http: httpx.Client, agent_id: str) -> dict[str, object]:
    body = http.get(f"/v1/agents/{agent_id}", headers={"user-agent": "curl/8.0"}).json()
    secrets = http.get(f"/v1/agents/{agent_id}", params={"include": "agent.secrets"}).json()["secrets"]
    return {k: v for k, v in body.items() if k not in CHANGING} | {"secrets": secrets}


class TestExplicitNull:
    def test_null_fields_leave_the_agent_unchanged(self, http: httpx.Client) -> None:
        identity = http.post("/v1/identities/", json={"identifier_key": "bob", "name": "Bob", "identity_type": "user"})
        created = http.post(
            "/v1/agents/",
            json={
                "name": "kept",
                "model": MODEL,
                "embedding": EMBEDDING,
                "description": "d",
                "metadata": {"k": 1},
                "timezone": "Europe/Paris",
                "tags": ["t"],
                "identity_ids": [identity.json()["id"]],
                "secrets": {"TOKEN": "s3cret"},
                "tool_rules": [{"type": "max_count_per_step", "tool_name": "memory_insert", "max_count_limit": 2}],
                "compaction_settings": {"mode": "all"},
                "message_buffer_autoclear": True,
            },
        )
        assert created.status_code == 200, created.text
        agent_id = created.json()["id"]
        before = _full(http, agent_id)
        nulls = dict.fromkeys(
            [
                "name",
                "description",
                "metadata",
                "timezone",
                "tags",
                "identity_ids",
                "secrets",
                "tool_exec_environment_variables",
                "tool_rules",
                "compaction_settings",
                "embedding",
                "embedding_config",
                "message_buffer_autoclear",
                "project_id",
                "response_format",
                "max_files_open",
                "per_file_view_window_char_limit",
                "last_stop_reason",
                "hidden",
            ]
        )
        response = http.patch(f"/v1/agents/{agent_id}", json=nulls)
        assert response.status_code == 200, response.text
        after = _full(http, agent_id)
        assert after == before
        assert after["tags"] == ["t"] and after["secrets"] and after["tool_rules"]

    def test_null_max_tokens_still_clears_it(self, client: Letta) -> None:
        agent = client.agents.create(name="m", model=MODEL, embedding=EMBEDDING, max_tokens=1234)
        assert agent.llm_config.max_tokens == 1234
        assert client.agents.update(agent.id, max_tokens=None).llm_config.max_tokens is None


class TestCreateUnknownTools:
    def test_unknown_tool_names_and_ids_are_letta_400s(self, http: httpx.Client) -> None:
        base = {"name": "t", "model": MODEL, "embedding": EMBEDDING}
        by_name = http.post("/v1/agents/", json={**base, "tools": ["nope", "also_nope", "memory_insert"]})
        assert by_name.status_code == 400
        assert by_name.json() == {"detail": "Tools not found by name: {'also_nope', 'nope'}"}
        missing = "tool-00000000-0000-4000-8000-000000000000"
        by_id = http.post("/v1/agents/", json={**base, "tool_ids": [missing]})
        assert by_id.status_code == 400
        assert by_id.json() == {"detail": f"Tools not found by id:   {{'{missing}'}}"}
        assert http.get("/v1/agents/count").json() == 0


class TestCompactionSettingsPatch:
    def test_a_partial_patch_merges_with_the_stored_settings(self, http: httpx.Client) -> None:
        stored = {"mode": "all", "prompt": "P", "clip_chars": 100, "sliding_window_percentage": 0.5, "model": MODEL}
        created = http.post("/v1/agents/", json={"name": "c", "model": MODEL, "compaction_settings": stored}).json()
        url = f"/v1/agents/{created['id']}"

        def patch(settings: dict[str, object]) -> dict[str, object]:
            response = http.patch(url, json={"compaction_settings": settings})
            assert response.status_code == 200, response.text
            return dict(response.json()["compaction_settings"])

        assert patch({"clip_chars": 200}) == {**created["compaction_settings"], "clip_chars": 200}
        # A new mode brings its default prompt; the other fields stay.
        moved = patch({"mode": "sliding_window"})
        assert moved["mode"] == "sliding_window" and moved["prompt"] == created_default_prompt(http)
        assert moved["clip_chars"] == 200 and moved["sliding_window_percentage"] == 0.5 and moved["model"] == MODEL
        assert patch({"mode": "all", "prompt": "Q"})["prompt"] == "Q"


def created_default_prompt(http: httpx.Client) -> object:
    """The prompt a new agent reports when it is given none."""
    return http.post("/v1/agents/", json={"name": "d", "model": MODEL}).json()["compaction_settings"]["prompt"]
