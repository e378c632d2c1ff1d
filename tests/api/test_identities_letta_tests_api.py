"""What Letta 0.16.8's tests/managers/test_identity_manager.py pins down about identities and blocks, as a
letta-client user sees it on memlet: the block list filtered by identity, and `PUT /v1/identities/` with
`block_ids` on an existing identity (README compatibility note: memlet links them, Letta ignored them there).

letta-client 1.12.1 has no `identities` resource, so identity calls go through the client's generic methods.
"""

from typing import Any

from letta_client import Letta


def api(client: Letta, method: str, path: str, **kwargs: Any) -> Any:
    return getattr(client, method)(path, cast_to=object, **kwargs)


def block_ids(client: Letta, **filters: Any) -> set[str]:
    return {b.id for b in client.blocks.list(**filters)}


class TestBlocksOfAnIdentity:
    def test_listed_by_identity_id_and_identifier_key_until_deleted(self, client: Letta) -> None:
        kept, dropped, other = (client.blocks.create(label=label, value="v") for label in ("human", "persona", "x"))
        body = {
            "identifier_key": "caren-1",
            "name": "caren",
            "identity_type": "user",
            "block_ids": [kept.id, dropped.id],
        }
        identity = api(client, "post", "/v1/identities/", body=body)
        assert block_ids(client, identity_id=identity["id"]) == {kept.id, dropped.id}
        assert block_ids(client, identifier_keys=["caren-1"]) == {kept.id, dropped.id}

        client.blocks.delete(dropped.id)
        assert block_ids(client, identity_id=identity["id"]) == {kept.id}
        assert block_ids(client, identifier_keys=["caren-1"]) == {kept.id}

        api(client, "delete", f"/v1/identities/{identity['id']}")
        assert block_ids(client, identity_id=identity["id"]) == set()
        assert block_ids(client) == {kept.id, other.id}


class TestUpsertLinksBlocks:
    def test_put_on_an_existing_key_replaces_its_blocks(self, client: Letta) -> None:
        first, second = (client.blocks.create(label=label, value="v") for label in ("human", "persona"))
        body = {"identifier_key": "caren-2", "name": "caren", "identity_type": "user", "block_ids": [first.id]}
        created = api(client, "put", "/v1/identities/", body=body)
        assert created["block_ids"] == [first.id]

        replaced = api(client, "put", "/v1/identities/", body=body | {"block_ids": [second.id]})
        assert replaced["id"] == created["id"] and replaced["block_ids"] == [second.id]
        assert block_ids(client, identity_id=created["id"]) == {second.id}

        kept = api(client, "put", "/v1/identities/", body={k: v for k, v in body.items() if k != "block_ids"})
        assert kept["block_ids"] == [second.id]


class TestBlockListOrderWithIdentityFilters:
    def test_identity_filters_keep_creation_order(self, client: Letta) -> None:
        """README compatibility note: Letta ordered a block list filtered by identity (or by agent count) by id,
        which is random; memlet keeps creation order, oldest first by default."""
        blocks = [client.blocks.create(label=f"b{i}", value="v") for i in range(6)]
        body = {
            "identifier_key": "caren-3",
            "name": "caren",
            "identity_type": "user",
            "block_ids": [b.id for b in blocks],
        }
        identity = api(client, "post", "/v1/identities/", body=body)
        created = [b.id for b in blocks]
        assert [b.id for b in client.blocks.list(identity_id=identity["id"])] == created
        assert [b.id for b in client.blocks.list(identifier_keys=["caren-3"], order="desc")] == created[::-1]
        assert [b.id for b in client.blocks.list(connected_to_agents_count_eq=[0])] == created
