"""A malformed id in the path, as the bots of Letta's ecosystem meet it: the Discord bot (letta-discord-bot-example)
and the n8n node (n8n-nodes-letta) send to whatever agent id the user configured, and show the error they get.
Letta 0.16.8 (``server/rest_api/app.py``, custom_request_validation_handler) tells a malformed ``<primitive>_id``
as a pattern mismatch against ``'<primitive>-{uuid4}'`` whatever its length, with the pattern in ``ctx`` and an
example id under ``examples``; other validation errors keep pydantic's wording, ``ctx`` included."""

import httpx
import pytest
from letta_client import Letta, UnprocessableEntityError

AGENT_PATTERN = "^agent-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"


def test_a_mistyped_agent_id_names_the_id_format(client: Letta) -> None:
    with pytest.raises(UnprocessableEntityError) as caught:
        client.agents.messages.create("my-agent", messages=[{"role": "user", "content": "hi"}])
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["examples"] == ["agent-123e4567-e89b-42d3-8456-426614174000"]
    detail = (
        "[{'type': 'string_pattern_mismatch', 'loc': ('path', 'agent_id'), 'msg': \"String should match pattern "
        f"'agent-{{uuid4}}'\", 'input': 'my-agent', 'ctx': {{'pattern': '{AGENT_PATTERN}'}}}}]"
    )
    assert body == {"trace_id": "", "detail": detail, "examples": body["examples"]}


def test_each_malformed_id_is_told_once_with_its_example(http: httpx.Client) -> None:
    agent = "agent-123e4567-e89b-42d3-8456-426614174000"
    block = f"{agent}x"  # a block id of the right length but the wrong prefix
    body = http.patch(f"/v1/agents/{agent[:-1]}/core-memory/blocks/attach/{block[6:]}").json()
    assert body["examples"] == [agent, "block-123e4567-e89b-42d3-8456-426614174000"]
    assert body["detail"].count("'type': 'string_pattern_mismatch'") == 2
    assert "String should match pattern 'block-{uuid4}'" in body["detail"]


def test_other_validation_errors_keep_pydantics_words(http: httpx.Client) -> None:
    # Letta rewrites only the ids it names by their prefix: a folder's id (`source-`) keeps pydantic's message.
    folder = http.get("/v1/folders/my-folder").json()
    assert "examples" not in folder
    assert "'msg': 'String should have at least 43 characters'" in folder["detail"]
    assert "'ctx': {'min_length': 43}" in folder["detail"]
    order = http.get("/v1/agents/", params={"order": "up"}).json()
    assert "examples" not in order
    assert order["detail"].endswith("'input': 'up', 'ctx': {'expected': \"'asc' or 'desc'\"}}]")
