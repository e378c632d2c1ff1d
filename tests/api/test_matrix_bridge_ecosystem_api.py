"""Letta-Matrix (oculairmedia's Matrix bridge for self-hosted Letta) against memlet, driven as its Python bridge
drives Letta through letta-client.

A file posted in a Matrix room goes to a folder named after the room: the bridge looks it up with
`folders.list(name=...)`, creates it with only `name` and `description` (the server's default embedding handle,
`LETTA_DEFAULT_EMBEDDING_HANDLE`, picks its embedding, as in Letta's folder route), attaches it to the room's agent
and polls `folders.files.list` until the upload's `processing_status` is `completed`. Letta's archive route falls
back to the same handle.
"""

import time
from collections.abc import Iterator

import pytest
from letta_client import BadRequestError, Letta

from memlet.config import Settings
from tests.api.listener import start_server
from tests.api.test_agents_api import EMBEDDING, MODEL
from tests.mock_llm import MockLLM

DEFAULT_EMBEDDING = "openai/text-embedding-ada-002"  # not the agent's, so the test sees which one a folder got


@pytest.fixture(scope="module")
def bridge(settings: Settings, pg_uri: str) -> Iterator[Letta]:
    with start_server(settings, pg_uri, default_embedding_handle=DEFAULT_EMBEDDING) as server:
        yield Letta(base_url=server.base_url, api_key="letta-token", max_retries=0, timeout=60)


def test_a_room_folder_without_embedding_gets_the_default_handle(bridge: Letta, mock_llm: MockLLM) -> None:
    agent = bridge.agents.create(model=MODEL, embedding=EMBEDDING, memory_blocks=[{"label": "persona", "value": "p"}])
    name = "matrix-room1-example.org"
    assert bridge.folders.list(name=name).items == []
    folder = bridge.folders.create(name=name, description="Documents from Matrix room !room1:example.org")
    assert folder.embedding_config.handle == DEFAULT_EMBEDDING
    assert folder.embedding_config.embedding_model == "text-embedding-ada-002"
    assert [f.id for f in bridge.folders.list(name=name).items] == [folder.id]

    assert bridge.agents.folders.list(agent.id).items == []
    bridge.agents.folders.attach(folder.id, agent_id=agent.id)
    assert [f.id for f in bridge.agents.folders.list(agent.id).items] == [folder.id]

    before = len(mock_llm.embedding_requests)
    upload = bridge.folders.files.upload(folder.id, file=("notes.md", b"# Notes\nThe answer is 42.\n", "text/markdown"))
    status = None
    for _ in range(100):
        [listed] = [f for f in bridge.folders.files.list(folder.id).items if f.id == upload.id]
        status = listed.processing_status
        if status in ("completed", "error"):
            break
        time.sleep(0.1)
    assert status == "completed"
    assert [r["model"] for r in mock_llm.embedding_requests[before:]] == ["text-embedding-ada-002"]


def test_a_room_folder_lookup_by_name_takes_underscore_literally(bridge: Letta) -> None:
    # Letta's name filter was ILIKE '%name%' unescaped: `_` matched any character, so the older folder of room
    # `!aXb:x` answered the lookup of room `!a_b:x` first, and that room's documents went into it. The filter
    # still matches part of a name in any case, as Letta's does.
    other = bridge.folders.create(name="matrix-aXb-x", description="room !aXb:x")
    own = bridge.folders.create(name="matrix-a_b-x", description="room !a_b:x")
    assert [f.id for f in bridge.folders.list(name="matrix-a_b-x").items] == [own.id]
    assert [f.id for f in bridge.folders.list(name="MATRIX-A").items] == [other.id, own.id]


def test_an_archive_without_embedding_gets_the_default_handle(bridge: Letta) -> None:
    archive = bridge.archives.create(name="room-archive")
    assert archive.embedding_config is not None and archive.embedding_config.handle == DEFAULT_EMBEDDING
    named = bridge.archives.create(name="named", embedding=EMBEDDING)
    assert named.embedding_config is not None and named.embedding_config.handle == EMBEDDING


def test_without_a_default_handle_a_folder_still_needs_an_embedding(client: Letta) -> None:
    with pytest.raises(BadRequestError) as refused:
        client.folders.create(name="no-embedding")
    assert refused.value.body == {
        "detail": "INVALID_ARGUMENT: Must specify either embedding or embedding_config in request"
    }
    assert client.archives.create(name="text-only").embedding_config is None
