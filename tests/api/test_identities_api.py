"""Identities through the official letta-client, as a user's program drives them.

letta-client 1.12.1 has no `identities` resource (the routes are deprecated), so identity CRUD goes through the
client's generic `get/post/put/patch/delete`, which still applies its error mapping; attaching to agents and
listing agents by identity use the SDK's own methods.
"""

from typing import Any

import pytest
from letta_client import BadRequestError, ConflictError, Letta, NotFoundError, UnprocessableEntityError

from memlet.ids import DEFAULT_ORG_ID

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
UNKNOWN_IDENTITY = "identity-123e4567-e89b-42d3-8456-426614174000"
UNKNOWN_AGENT = "agent-123e4567-e89b-42d3-8456-426614174000"
FIELDS = {
    "id",
    "identifier_key",
    "name",
    "identity_type",
    "project_id",
    "agent_ids",
    "block_ids",
    "organization_id",
    "properties",
}


def api(client: Letta, method: str, path: str, **kwargs: Any) -> Any:
    """A raw call through the SDK's transport and error mapping; the parsed JSON comes back."""
    return getattr(client, method)(path, cast_to=object, **kwargs)


def create(client: Letta, key: str, **fields: Any) -> Any:
    body = {"identifier_key": key, "name": fields.pop("name", key), "identity_type": "user", **fields}
    return api(client, "post", "/v1/identities/", body=body)


def retrieve(client: Letta, identity_id: str) -> Any:
    return api(client, "get", f"/v1/identities/{identity_id}")


def list_identities(client: Letta, **params: Any) -> Any:
    return api(client, "get", "/v1/identities/", options={"params": params})


def make_agent(client: Letta, name: str, **kwargs: Any) -> Any:
    return client.agents.create(name=name, model=MODEL, embedding=EMBEDDING, **kwargs)


def walk(client: Letta, order: str, limit: int = 2, **filters: Any) -> list[str]:
    """Follow `after` cursors page by page, as a client paginates."""
    seen: list[str] = []
    after: str | None = None
    while True:
        params = {"order": order, "limit": limit, **filters, **({"after": after} if after else {})}
        page = list_identities(client, **params)
        if not page:
            return seen
        seen += [i["id"] for i in page]
        after = page[-1]["id"]


class TestCreateIdentity:
    def test_returns_wire_shape_with_typed_properties(self, client: Letta) -> None:
        properties = [
            {"key": "email", "value": "bob@example.com", "type": "string"},
            {"key": "age", "value": 42, "type": "number"},
            {"key": "vip", "value": True, "type": "boolean"},
            {"key": "prefs", "value": {"lang": "en"}, "type": "json"},
        ]
        identity = create(client, "bob", name="Bob", properties=properties)
        assert set(identity) == FIELDS
        assert identity["id"].startswith("identity-")
        assert identity["name"] == "Bob" and identity["identity_type"] == "user"
        assert identity["project_id"] is None and identity["organization_id"] == DEFAULT_ORG_ID
        assert identity["agent_ids"] == [] and identity["block_ids"] == []
        assert identity["properties"] == properties
        assert retrieve(client, identity["id"]) == identity
        assert list_identities(client) == [identity]

    def test_duplicate_key_409_names_it(self, client: Letta) -> None:
        create(client, "dup")
        with pytest.raises(ConflictError) as err:
            create(client, "dup")
        assert "dup" in str(err.value.body)
        assert len(list_identities(client)) == 1

    def test_same_key_in_another_project_is_allowed(self, client: Letta) -> None:
        create(client, "shared-key")
        other = create(client, "shared-key", project_id="project-2")
        assert other["project_id"] == "project-2"
        with pytest.raises(ConflictError):
            create(client, "shared-key", project_id="project-2")

    def test_with_agent_ids_links_the_agents(self, client: Letta) -> None:
        agent = make_agent(client, "linked")
        identity = create(client, "with-agent", agent_ids=[agent.id])
        assert identity["agent_ids"] == [agent.id]
        assert [a.id for a in client.agents.list(identity_id=identity["id"]).items] == [agent.id]

    def test_unknown_agent_404_and_nothing_written(self, client: Letta) -> None:
        with pytest.raises(NotFoundError) as err:
            create(client, "ghost-link", agent_ids=[UNKNOWN_AGENT])
        assert UNKNOWN_AGENT in str(err.value.body)
        assert list_identities(client) == []

    def test_unknown_identity_type_422(self, client: Letta) -> None:
        with pytest.raises(UnprocessableEntityError):
            create(client, "typo", identity_type="robot")


class TestRetrieveIdentity:
    def test_unknown_id_404(self, client: Letta) -> None:
        with pytest.raises(NotFoundError) as err:
            retrieve(client, UNKNOWN_IDENTITY)
        assert UNKNOWN_IDENTITY in str(err.value.body)

    def test_malformed_id_422(self, client: Letta) -> None:
        with pytest.raises(UnprocessableEntityError):
            retrieve(client, "identity-nope")


class TestListIdentities:
    def test_filters(self, client: Letta) -> None:
        create(client, "alice", name="Alice Smith")
        create(client, "acme", name="Acme Corp", identity_type="org")
        create(client, "bob", name="Bob", project_id="p1")
        assert [i["identifier_key"] for i in list_identities(client, name="smith")] == ["alice"]
        assert [i["identifier_key"] for i in list_identities(client, identity_type="org")] == ["acme"]
        assert [i["identifier_key"] for i in list_identities(client, project_id="p1")] == ["bob"]
        assert len(list_identities(client, project_id="")) == 3  # as Letta: empty means no filter
        assert [i["identifier_key"] for i in list_identities(client, identifier_key="alice")] == ["alice"]
        assert api(client, "get", "/v1/identities/count") == 3

    def test_default_order_is_newest_first(self, client: Letta) -> None:
        ids = [create(client, f"k{n}")["id"] for n in range(3)]
        assert [i["id"] for i in list_identities(client)] == ids[::-1]

    def test_cursor_pagination_visits_each_once_in_both_orders(self, client: Letta) -> None:
        ids = [create(client, f"page{n}")["id"] for n in range(5)]
        assert walk(client, "asc") == ids
        assert walk(client, "desc") == ids[::-1]

    def test_before_returns_the_nearest_rows(self, client: Letta) -> None:
        ids = [create(client, f"near{n}")["id"] for n in range(5)]
        page = list_identities(client, order="asc", before=ids[4], limit=2)
        assert [i["id"] for i in page] == ids[2:4]

    def test_unknown_cursor_404_as_letta(self, client: Letta) -> None:
        # Letta's identity lists look each cursor up first (`before`, then `after`) and answer its NoResultFound.
        create(client, "known")
        with pytest.raises(NotFoundError) as err:
            list_identities(client, after=UNKNOWN_IDENTITY)
        assert err.value.body == {"detail": f"No Identity found with id {UNKNOWN_IDENTITY}"}
        with pytest.raises(NotFoundError):
            list_identities(client, before=UNKNOWN_IDENTITY)


class TestUpdateIdentity:
    def test_changes_given_fields_and_merges_properties(self, client: Letta) -> None:
        identity = create(client, "patchme", properties=[{"key": "a", "value": "1", "type": "string"}])
        body = {"name": "Renamed", "properties": [{"key": "b", "value": 2, "type": "number"}]}
        updated = api(client, "patch", f"/v1/identities/{identity['id']}", body=body)
        assert updated["name"] == "Renamed" and updated["identifier_key"] == "patchme"
        assert [p["key"] for p in updated["properties"]] == ["a", "b"]

    def test_agent_ids_are_added_not_replaced(self, client: Letta) -> None:
        first, second = make_agent(client, "first"), make_agent(client, "second")
        identity = create(client, "grow", agent_ids=[first.id])
        updated = api(client, "patch", f"/v1/identities/{identity['id']}", body={"agent_ids": [second.id]})
        assert sorted(updated["agent_ids"]) == sorted([first.id, second.id])

    def test_taking_another_identitys_key_409(self, client: Letta) -> None:
        create(client, "taken")
        other = create(client, "free")
        with pytest.raises(ConflictError):
            api(client, "patch", f"/v1/identities/{other['id']}", body={"identifier_key": "taken"})

    def test_unknown_id_404(self, client: Letta) -> None:
        with pytest.raises(NotFoundError):
            api(client, "patch", f"/v1/identities/{UNKNOWN_IDENTITY}", body={"name": "x"})


class TestUpsertIdentity:
    def test_creates_then_replaces_by_identifier_key(self, client: Letta) -> None:
        body = {
            "identifier_key": "upsert-me",
            "name": "First",
            "identity_type": "user",
            "properties": [{"key": "old", "value": "x", "type": "string"}],
        }
        created = api(client, "put", "/v1/identities/", body=body)
        body |= {"name": "Second", "identity_type": "org", "properties": [{"key": "new", "value": 1, "type": "number"}]}
        replaced = api(client, "put", "/v1/identities/", body=body)
        assert replaced["id"] == created["id"]
        assert replaced["name"] == "Second" and replaced["identity_type"] == "org"
        assert replaced["properties"] == [{"key": "new", "value": 1, "type": "number"}]
        assert api(client, "get", "/v1/identities/count") == 1


class TestProperties:
    def test_put_replaces_the_whole_list(self, client: Letta) -> None:
        identity = create(
            client,
            "props",
            properties=[{"key": "a", "value": "1", "type": "string"}, {"key": "b", "value": "2", "type": "string"}],
        )
        new = [{"key": "c", "value": False, "type": "boolean"}]
        returned = api(client, "put", f"/v1/identities/{identity['id']}/properties", body=new)
        assert returned["properties"] == new
        assert retrieve(client, identity["id"])["properties"] == new

    def test_invalid_property_type_422(self, client: Letta) -> None:
        identity = create(client, "badprop")
        with pytest.raises(UnprocessableEntityError):
            api(
                client,
                "put",
                f"/v1/identities/{identity['id']}/properties",
                body=[{"key": "a", "value": "1", "type": "date"}],
            )

    def test_unknown_identity_404(self, client: Letta) -> None:
        with pytest.raises(NotFoundError):
            api(client, "put", f"/v1/identities/{UNKNOWN_IDENTITY}/properties", body=[])


class TestDeleteIdentity:
    def test_deletes_identity_but_not_its_agents(self, client: Letta) -> None:
        agent = make_agent(client, "survivor")
        identity = create(client, "doomed", agent_ids=[agent.id])
        api(client, "delete", f"/v1/identities/{identity['id']}")
        with pytest.raises(NotFoundError):
            retrieve(client, identity["id"])
        assert client.agents.retrieve(agent.id).identity_ids == []

    def test_unknown_id_404(self, client: Letta) -> None:
        with pytest.raises(NotFoundError):
            api(client, "delete", f"/v1/identities/{UNKNOWN_IDENTITY}")


class TestAttachToAgent:
    def test_attach_then_list_agents_by_identity(self, client: Letta) -> None:
        mine, other = make_agent(client, "mine"), make_agent(client, "other")
        identity = create(client, "owner")
        client.agents.identities.attach(identity["id"], agent_id=mine.id)
        client.agents.identities.attach(identity["id"], agent_id=mine.id)  # idempotent
        assert [a.id for a in client.agents.list(identity_id=identity["id"]).items] == [mine.id]
        assert [a.id for a in client.agents.list(identifier_keys=["owner"]).items] == [mine.id]
        # As in Letta, an agent's identity ids come with its identities only (`include=agent.identities`).
        assert client.agents.retrieve(mine.id).identity_ids == []
        assert client.agents.retrieve(mine.id, include=["agent.identities"]).identity_ids == [identity["id"]]
        shown = api(client, "get", f"/v1/agents/{mine.id}", options={"params": {"include": "agent.identities"}})
        assert [(i["id"], i["organization_id"]) for i in shown["identities"]] == [(identity["id"], DEFAULT_ORG_ID)]
        assert retrieve(client, identity["id"])["agent_ids"] == [mine.id]
        listed = api(client, "get", f"/v1/identities/{identity['id']}/agents")
        assert [a["id"] for a in listed] == [mine.id]
        assert other.id not in [a.id for a in client.agents.list(identity_id=identity["id"]).items]

    def test_detach(self, client: Letta) -> None:
        agent = make_agent(client, "leaving")
        identity = create(client, "left", agent_ids=[agent.id])
        client.agents.identities.detach(identity["id"], agent_id=agent.id)
        assert client.agents.list(identity_id=identity["id"]).items == []
        assert retrieve(client, identity["id"])["agent_ids"] == []

    def test_unknown_cursor_in_agents_of_identity_404(self, client: Letta) -> None:
        agent = make_agent(client, "listed")
        identity = create(client, "lister", agent_ids=[agent.id])
        path = f"/v1/identities/{identity['id']}/agents"
        with pytest.raises(NotFoundError) as err:
            api(client, "get", path, options={"params": {"before": UNKNOWN_AGENT}})
        assert err.value.body == {"detail": f"No Agent found with id {UNKNOWN_AGENT}"}
        assert [a["id"] for a in api(client, "get", path, options={"params": {"after": agent.id}})] == []

    def test_unknown_identity_404_malformed_400(self, client: Letta) -> None:
        agent = make_agent(client, "lonely")
        with pytest.raises(NotFoundError):
            client.agents.identities.attach(UNKNOWN_IDENTITY, agent_id=agent.id)
        with pytest.raises(BadRequestError):
            client.agents.identities.attach("not-an-identity", agent_id=agent.id)

    def test_unknown_agent_404(self, client: Letta) -> None:
        identity = create(client, "agentless")
        with pytest.raises(NotFoundError) as err:
            client.agents.identities.attach(identity["id"], agent_id=UNKNOWN_AGENT)
        assert UNKNOWN_AGENT in str(err.value.body)


class TestAttachToBlock:
    def test_attach_lists_block_for_identity_and_detach(self, client: Letta) -> None:
        block = client.blocks.create(label="human", value="Bob")
        identity = create(client, "block-owner")
        attached = api(client, "patch", f"/v1/blocks/{block.id}/identities/attach/{identity['id']}")
        assert attached["id"] == block.id
        assert retrieve(client, identity["id"])["block_ids"] == [block.id]
        listed = api(client, "get", f"/v1/identities/{identity['id']}/blocks")
        assert [b["id"] for b in listed] == [block.id]
        api(client, "patch", f"/v1/blocks/{block.id}/identities/detach/{identity['id']}")
        assert retrieve(client, identity["id"])["block_ids"] == []

    def test_unknown_cursor_in_blocks_of_identity_404(self, client: Letta) -> None:
        block = client.blocks.create(label="human", value="Bob")
        identity = create(client, "block-lister", block_ids=[block.id])
        missing = "block-00000000-0000-4000-8000-000000000000"
        with pytest.raises(NotFoundError) as err:
            api(client, "get", f"/v1/identities/{identity['id']}/blocks", options={"params": {"after": missing}})
        assert err.value.body == {"detail": f"No Block found with id {missing}"}
