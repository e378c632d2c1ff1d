"""Letta-MCP-server (oculairmedia/Letta-MCP-server), a Node MCP server self-hosters put in front of Letta, against
memlet.

It turns each MCP tool call into raw axios requests on `${LETTA_BASE_URL}/v1` with `X-BARE-PASSWORD: password <pw>`
and `Authorization: Bearer <pw>`, and reads the JSON (or, for `prompt_agent`, the SSE text of a non-token stream, from
which it keeps the first `assistant_message`'s `content`). Several tools also send a `user_id` header holding an
*agent* id ("for authorization"): Letta 0.16.8 refuses any `user_id` that is not `user-<uuid4>` with a 400 before
the route runs, so those calls fail against Letta too, and the program shows the server's `detail` to the model.
The tests below replay its requests byte for byte with httpx (paths with and without trailing slashes as it sends
them).
"""

import json
from typing import Any

import httpx

PASSWORD_HEADERS = {"X-BARE-PASSWORD": "password pw", "Authorization": "Bearer pw", "Accept": "application/json"}

# `create_agent`'s body, with its defaults (model and embedding handles plus a raw llm_config and unknown keys).
CREATE_AGENT = {
    "name": "mcp-agent",
    "description": "agent made through MCP",
    "agent_type": "memgpt_agent",
    "model": "openai/gpt-4",
    "llm_config": {
        "model": "gpt-4",
        "model_endpoint_type": "openai",
        "context_window": 16000,
        "max_tokens": 1000,
        "temperature": 0.7,
        "frequency_penalty": 0.5,
        "presence_penalty": 0.5,
        "functions_config": {"allow": True, "functions": []},
    },
    "embedding": "openai/text-embedding-ada-002",
    "parameters": {"context_window": 16000, "max_tokens": 1000, "temperature": 0.7},
    "core_memory": {},
}

DICE = '''def roll_dice(sides: int) -> int:
    """Roll a die.

    Args:
        sides: number of sides

    Returns:
        int: the roll
    """
    return 4
'''


def create_agent(http: httpx.Client) -> dict[str, Any]:
    response = http.post("/v1/agents", json=CREATE_AGENT, headers=PASSWORD_HEADERS)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def first_assistant_text(sse: str) -> str | None:
    """What `prompt_agent` keeps: the first `assistant_message` among the `data: ` lines."""
    for line in sse.split("\n"):
        if line.strip().startswith("data: "):
            try:
                event = json.loads(line[6:])
            except json.JSONDecodeError:
                continue
            if event.get("message_type") == "assistant_message" and event.get("content"):
                return str(event["content"])
    return None


def test_a_user_id_header_holding_an_agent_id_is_refused_with_letta_s_message(http: httpx.Client) -> None:
    agent_id = create_agent(http)["id"]
    # `create_agent` then reads the agent back with `user_id: <agent id>`; `attach_memory_block`, `read_memory_block`,
    # `list_memory_blocks` and `upload_tool` send the same header (when given an agent id).
    as_agent = {**PASSWORD_HEADERS, "user_id": agent_id}
    expected = {
        "detail": f"INVALID_ARGUMENT: Invalid user ID format: {agent_id}. Expected format: 'user-<uuid4>'",
    }
    for method, path in [
        ("GET", f"/v1/agents/{agent_id}"),
        ("GET", f"/v1/agents/{agent_id}/core-memory/blocks?templates_only=false"),
        ("GET", "/v1/tools"),
        ("POST", "/v1/blocks"),
    ]:
        body = {"label": "notes", "value": "v"} if method == "POST" else None
        response = http.request(method, path, headers=as_agent, json=body)
        assert (response.status_code, response.json()) == (400, expected), path
    # Without it (the other tools), the same agent reads fine.
    assert http.get(f"/v1/agents/{agent_id}", headers=PASSWORD_HEADERS).json()["name"] == "mcp-agent"
