"""``/v1/blocks`` through the official letta-client, as a user's program drives it."""

import json

import httpx
import pytest
from letta_client import BadRequestError, Letta, NotFoundError, UnprocessableEntityError

from tests.shared_paths import SAMPLES

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
MISSING_BLOCK = "block-00000000-0000-4000-8000-000000000000"


def make_agent(client: Letta, name: str, **kwargs: object):  # type: ignore[no-untyped-def]
    kwargs.setdefault("memory_blocks", [{"label": "human", "value": "Name: Bob"}])
    return client.agents.create(name=name, model=MODEL, embedding=EMBEDDING, **kwargs)  # type: ignore[arg-type]


class TestCreateBlock:
    def test_shape_matches_letta_sample(self, http: httpx.Client) -> None:
        expected = json.loads((SAMPLES / "block_after_edit.json").read_text())
        response = http.post("/v1/blocks/", json={"label": "human", "value": "Bob"})
        assert response.status_code == 200, response.text
        block = response.json()
        assert set(block) == set(expected)
        assert block["id"].startswith("block-")
        assert (block["limit"], block["metadata"], block["tags"], block["description"]) == (100000, {}, [], None)

    def test_sdk_round_trip(self, client: Letta) -> None:
        created = client.blocks.create(
            label="persona", value="I am Sam.", description="who I am", limit=500, tags=["t1"], metadata={"k": 1}
        )
        fetched = client.blocks.retrieve(created.id)
        assert fetched.model_dump() == created.model_dump()
        assert (fetched.value, fetched.limit, fetched.tags, fetched.metadata) == ("I am Sam.", 500, ["t1"], {"k": 1})

    def test_over_limit_400_names_limit_and_size_nothing_written(self, client: Letta) -> None:
        with pytest.raises(BadRequestError) as err:
            client.blocks.create(label="human", value="x" * 12, limit=10)
        detail = err.value.body["detail"]  # type: ignore[index]
        assert "10" in detail and "12" in detail and "human" in detail
        assert list(client.blocks.list()) == []

    def test_missing_label_422(self, http: httpx.Client) -> None:
        response = http.post("/v1/blocks/", json={"value": "v"})
        assert response.status_code == 422
        assert "label" in response.json()["detail"]


class TestRetrieveBlock:
    def test_unknown_404_letta_text(self, client: Letta) -> None:
        with pytest.raises(NotFoundError) as err:
            client.blocks.retrieve(MISSING_BLOCK)
        assert err.value.body == {"detail": f"Block with id '{MISSING_BLOCK}' not found"}

    def test_malformed_id_422(self, http: httpx.Client) -> None:
        assert http.get("/v1/blocks/not-a-block").status_code == 422
        assert http.get("/v1/blocks/agent-00000000-0000-4000-8000-000000000000").status_code == 422


class TestModifyBlock:
    def test_partial_update(self, client: Letta) -> None:
        block = client.blocks.create(label="human", value="Bob", description="d", read_only=True)
        updated = client.blocks.update(block.id, value="Ann", tags=["new"])
        assert (updated.value, updated.description, updated.read_only, updated.tags) == ("Ann", "d", True, ["new"])
        assert client.blocks.retrieve(block.id).value == "Ann"

    def test_over_limit_422_nothing_written(self, client: Letta) -> None:
        block = client.blocks.create(label="human", value="Bob", limit=5)
        with pytest.raises(UnprocessableEntityError) as err:
            client.blocks.update(block.id, value="123456")
        assert "5" in err.value.body["detail"] and "6" in err.value.body["detail"]  # type: ignore[index]
        with pytest.raises(UnprocessableEntityError):
            client.blocks.update(block.id, limit=2)
        after = client.blocks.retrieve(block.id)
        assert (after.value, after.limit) == ("Bob", 5)

    def test_unknown_404(self, client: Letta) -> None:
        with pytest.raises(NotFoundError):
            client.blocks.update(MISSING_BLOCK, value="x")

    def test_wrong_type_422(self, http: httpx.Client, client: Letta) -> None:
        block = client.blocks.create(label="human", value="Bob")
        assert http.patch(f"/v1/blocks/{block.id}", json={"limit": "lots"}).status_code == 422


class TestDeleteBlock:
    def test_delete_then_404(self, client: Letta) -> None:
        block = client.blocks.create(label="human", value="Bob")
        client.blocks.delete(block.id)
        with pytest.raises(NotFoundError):
            client.blocks.retrieve(block.id)
        with pytest.raises(NotFoundError):
            client.blocks.delete(block.id)

    def test_deleted_block_leaves_agents(self, client: Letta) -> None:
        block = client.blocks.create(label="shared", value="v")
        agent = make_agent(client, "a", block_ids=[block.id])
        client.blocks.delete(block.id)
        assert [b.label for b in client.agents.blocks.list(agent.id)] == ["human"]


class TestListBlocks:
    def seed(self, client: Letta) -> dict[str, str]:
        specs: list[dict[str, object]] = [
            {"label": "human", "value": "likes 100% cotton", "tags": ["a"], "description": "about the user"},
            {"label": "persona", "value": "helpful", "tags": ["a", "b"], "project_id": "p1"},
            {"label": "notes/todo", "value": "buy milk"},
            {"label": "tmpl", "value": "t", "is_template": True, "template_name": "Base Human"},
        ]
        return {str(s["label"]): client.blocks.create(**s).id for s in specs}  # type: ignore[arg-type]

    def labels(self, client: Letta, **params: object) -> list[str]:
        return [b.label or "" for b in client.blocks.list(**params)]  # type: ignore[arg-type]

    def test_default_oldest_first_without_templates(self, client: Letta) -> None:
        self.seed(client)
        assert self.labels(client) == ["human", "persona", "notes/todo"]
        assert self.labels(client, order="desc") == ["notes/todo", "persona", "human"]

    def test_each_filter(self, client: Letta, http: httpx.Client) -> None:
        seeded = self.seed(client)
        make_agent(client, "a", block_ids=[seeded["persona"]], memory_blocks=[])
        make_agent(client, "b", block_ids=[seeded["persona"]], memory_blocks=[])
        assert self.labels(client, label="persona") == ["persona"]
        assert self.labels(client, templates_only=True) == ["tmpl"]
        assert self.labels(client, templates_only=True, name="Base Human") == ["tmpl"]
        assert self.labels(client, project_id="p1") == ["persona"]
        assert [b["label"] for b in http.get("/v1/blocks/", params={"project_id": ""}).json()] == self.labels(client)
        assert http.get("/v1/blocks/count", params={"project_id": ""}).json() == 3  # filtered: templates left out
        assert self.labels(client, tags=["b"]) == ["persona"]
        assert self.labels(client, tags=["a", "b"]) == ["human", "persona"]
        assert self.labels(client, tags=["a", "b"], match_all_tags=True) == ["persona"]
        assert self.labels(client, label_search="todo") == ["notes/todo"]
        assert self.labels(client, description_search="USER") == ["human"]
        assert self.labels(client, value_search="0% c") == ["human"]
        assert self.labels(client, value_search="%") == ["human"]
        assert self.labels(client, connected_to_agents_count_gt=1) == ["persona"]
        assert "persona" not in self.labels(client, connected_to_agents_count_lt=1)
        assert self.labels(client, connected_to_agents_count_eq=[2]) == ["persona"]

    def test_count_filters(self, client: Letta, http: httpx.Client) -> None:
        self.seed(client)
        assert http.get("/v1/blocks/count", params={"tags": ["a", "b"], "match_all_tags": True}).json() == 1
        assert http.get("/v1/blocks/count", params={"templates_only": True}).json() == 1
        assert http.get("/v1/blocks/count", params={"name": "Base Human"}).json() == 0  # a template: filtered out

    def test_count_includes_hidden_and_without_filters_templates(self, http: httpx.Client) -> None:
        # Letta: no filter counts every block of the organization; a filter keeps the template flag, never hides.
        for body in ({"label": "plain"}, {"label": "tmpl", "is_template": True}, {"label": "secret", "hidden": True}):
            assert http.post("/v1/blocks/", json={"value": "v"} | body).status_code == 200
        assert [b["label"] for b in http.get("/v1/blocks/").json()] == ["plain"]
        assert http.get("/v1/blocks/count").json() == 3
        assert http.get("/v1/blocks/count", params={"label": "secret"}).json() == 1
        assert http.get("/v1/blocks/count", params={"label": "tmpl"}).json() == 0

    def test_bad_filter_values_422(self, http: httpx.Client) -> None:
        assert http.get("/v1/blocks/", params={"label": "no spaces"}).status_code == 422
        assert http.get("/v1/blocks/", params={"order": "sideways"}).status_code == 422
        assert http.get("/v1/blocks/", params={"identity_id": "identity-nope"}).status_code == 422

    @pytest.mark.parametrize("order", ["asc", "desc"])
    def test_pagination_walks_every_row_once(self, client: Letta, order: str) -> None:
        created = [client.blocks.create(label=f"b{i}", value=str(i)).id for i in range(7)]
        expected = created if order == "asc" else created[::-1]
        forward = [b.id for b in client.blocks.list(limit=3, order=order)]  # type: ignore[arg-type]
        assert forward == expected
        page = client.blocks.list(limit=3, order=order, before=expected[-1])  # type: ignore[arg-type]
        backward: list[str] = []
        while page.items:
            backward = [b.id for b in page.items] + backward
            if not page.has_next_page():
                break
            page = page.get_next_page()
        assert backward == expected[:-1]

    def test_unknown_cursor_lists_from_the_start(self, client: Letta) -> None:
        # Letta looks a cursor up first and ignores one that names no block.
        created = [client.blocks.create(label=f"b{i}", value=str(i)).id for i in range(3)]
        assert [b.id for b in client.blocks.list(after=MISSING_BLOCK).items] == created
        assert [b.id for b in client.blocks.list(before=MISSING_BLOCK, limit=2).items] == created[:2]
        assert [b.id for b in client.blocks.list(after=MISSING_BLOCK, before=created[2]).items] == created[:2]


class TestListAgentsForBlock:
    def test_lists_holders_newest_first(self, client: Letta) -> None:
        block = client.blocks.create(label="shared", value="v")
        first = make_agent(client, "first", block_ids=[block.id])
        second = make_agent(client, "second", block_ids=[block.id])
        make_agent(client, "other")
        agents = list(client.blocks.agents.list(block.id))
        assert [a.id for a in agents] == [second.id, first.id]
        assert agents[0].blocks == []  # 1.x clients get relationships only when asked
        with_blocks = client.blocks.agents.list(block.id, include=["agent.blocks"], order="asc").items
        assert [a.id for a in with_blocks] == [first.id, second.id]
        assert {b.label for b in with_blocks[0].blocks} == {"human", "shared"}

    def test_pagination_both_orders(self, client: Letta) -> None:
        block = client.blocks.create(label="shared", value="v")
        made = [make_agent(client, f"a{i}", block_ids=[block.id]).id for i in range(5)]
        assert [a.id for a in client.blocks.agents.list(block.id, limit=2, order="asc")] == made
        assert [a.id for a in client.blocks.agents.list(block.id, limit=2)] == made[::-1]

    def test_unknown_block_404(self, client: Letta) -> None:
        with pytest.raises(NotFoundError):
            client.blocks.agents.list(MISSING_BLOCK)

    def test_unknown_cursor_lists_from_the_start(self, client: Letta) -> None:
        block = client.blocks.create(label="shared", value="v")
        made = [make_agent(client, f"a{i}", block_ids=[block.id]).id for i in range(2)]
        missing = "agent-00000000-0000-4000-8000-000000000000"
        assert [a.id for a in client.blocks.agents.list(block.id, after=missing).items] == made[::-1]
        assert [a.id for a in client.blocks.agents.list(block.id, before=missing).items] == made[::-1]


def test_unprocessable_is_the_sdk_exception(client: Letta) -> None:
    with pytest.raises(UnprocessableEntityError):
        client.blocks.retrieve("block-123")
