"""Agent files that must be refused (malformed, oversized, bad options) leave no rows; imported agents take turns,
and MCP tools without their server fail clearly."""

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from letta_client import BadRequestError, Letta

from tests.api.agent_files_support import AF_DIR, EXPECTED, MODEL, counts, import_bytes, raw, v2
from tests.mock_llm import MockLLM, Reply


def _without_groups() -> dict[str, Any]:
    data = v2()
    del data["groups"]
    return data


def _unknown_block_key() -> dict[str, Any]:
    data = v2()
    data["blocks"][0]["colour"] = "red"
    return data


def _wrong_type() -> dict[str, Any]:
    data = v2()
    data["agents"][0]["messages"] = "none"
    return data


def _unknown_rule() -> dict[str, Any]:
    data = v2()
    data["agents"][0]["tool_rules"] = [{"tool_name": "send_message", "type": "teleport"}]
    return data


def _dangling_block() -> dict[str, Any]:
    data = v2()
    data["agents"][0]["block_ids"].append("block-99")
    return data


def _bad_tool_late() -> dict[str, Any]:
    """Passes validation, then fails while importing (after tools and blocks were written): nothing may stay."""
    data = v2()
    data["agents"][0]["max_files_open"] = 10_000
    return data


MALFORMED = {
    "groups": (_without_groups, "groups"),
    "colour": (_unknown_block_key, "blocks.0.colour"),
    "messages": (_wrong_type, "agents.0.messages"),
    "teleport": (_unknown_rule, "tool_rules"),
    "block-99": (_dangling_block, "block-99"),
    "max_files_open": (_bad_tool_late, "max_files_open"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_files_give_400_naming_the_field_and_leave_no_rows(
    client: Letta, http: httpx.Client, case: str
) -> None:
    build, field = MALFORMED[case]
    before = counts(http)
    with pytest.raises(BadRequestError) as caught:
        import_bytes(client, json.dumps(build()).encode(), model=MODEL)
    assert field in str(caught.value.body)
    assert counts(http) == before


def test_not_json_and_legacy_without_core_keys(http: httpx.Client) -> None:
    response = http.post("/v1/agents/import", files={"file": ("a.af", b"{not json", "application/json")})
    assert response.status_code == 400 and "Corrupted" in response.json()["detail"]
    legacy = json.loads(raw("customer_service.af"))
    legacy["messages"][0]["role"] = 7
    response = http.post("/v1/agents/import", files={"file": ("a.af", json.dumps(legacy).encode(), "text/plain")})
    assert response.status_code == 400 and "messages.0.role" in response.json()["detail"]


def test_oversized_files_give_413_without_rows(http: httpx.Client) -> None:
    before = counts(http)
    padding = b" " * (25 * 1024 * 1024)  # over the 24 MiB agent-file limit, under the server's body limit
    response = http.post("/v1/agents/import", files={"file": ("big.af", b"{" + padding + b"}", "application/json")})
    assert response.status_code == 413

    def chunks() -> Any:
        for _ in range(50):
            yield b" " * (1024 * 1024)

    boundary = "afboundary"
    head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.af"\r\n\r\n'.encode()

    def body() -> Any:
        yield head
        yield from chunks()
        yield f"\r\n--{boundary}--\r\n".encode()

    response = http.post(
        "/v1/agents/import", content=body(), headers={"content-type": f"multipart/form-data; boundary={boundary}"}
    )
    assert response.status_code == 413
    assert counts(http) == before


def test_an_imported_agent_takes_a_turn(client: Letta, mock_llm: MockLLM) -> None:
    (agent_id,) = import_bytes(client, raw("customer_service.af"), model=MODEL)
    mock_llm.script(Reply.tool_call("send_message", {"message": "Back from the file!"}))
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "hello"}])
    texts = [m.content for m in response.messages if m.message_type == "assistant_message"]
    assert texts == ["Back from the file!"]
    sent = json.dumps(mock_llm.requests[-1]["messages"])
    assert "2025-03-31 08:47:19 PM PDT-0700" in sent  # the imported history reached the model
    assert "Adaptive Neural Network Assistant" in sent  # and so did the imported memory


def test_mcp_tools_without_a_server_import_and_fail_clearly(client: Letta, mock_llm: MockLLM) -> None:
    data = v2()
    data["tools"].append(
        {
            "id": "tool-90",
            "name": "web_search_exa",
            "tool_type": "external_mcp",
            "description": "Search the web",
            "tags": ["mcp:Exa"],
            "source_type": "python",
            "source_code": "def web_search_exa(query: str):\n    raise RuntimeError('MCP stub')\n",
            "json_schema": {
                "name": "web_search_exa",
                "description": "Search",
                "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
            },
            "metadata_": {"mcp": {"server_name": "Exa"}},
        }
    )
    data["agents"][0]["tool_ids"].append("tool-90")
    (agent_id,) = import_bytes(client, json.dumps(data).encode(), model=MODEL)
    agent = client.agents.retrieve(agent_id, include=["agent.tools"])
    tool = next(t for t in agent.tools if t.name == "web_search_exa")
    assert tool.tool_type == "external_mcp" and tool.tags == ["mcp:Exa"]
    mock_llm.script(
        Reply.tool_call("web_search_exa", {"query": "x"}), Reply.tool_call("send_message", {"message": "ok"})
    )
    response = client.agents.messages.create(agent_id, messages=[{"role": "user", "content": "search"}])
    returns = [m for m in response.messages if m.message_type == "tool_return_message"]
    assert returns[0].status == "error" and "MCP server 'Exa'" in returns[0].tool_return


def test_unknown_import_path_shapes(http: httpx.Client) -> None:
    response = http.post("/v1/agents/import", data={"strip_messages": "maybe"}, files={"file": ("a", b"{}")})
    assert response.status_code == 400
    response = http.post("/v1/agents/import", files={"file": ("a", b"{}")}, data={"secrets": "[1]"})
    assert response.status_code == 400 and "secrets" in response.json()["detail"]
    body = '--b\r\nContent-Disposition: form-data; name="file"; filename="\U000f28af"\r\n\r\n{}\r\n--b--\r\n'
    response = http.post(
        "/v1/agents/import", content=body.encode(), headers={"content-type": "multipart/form-data; boundary=b"}
    )
    assert response.status_code == 400  # a header the multipart parser cannot read is the client's error


def test_shared_dir_holds_the_six_files() -> None:
    assert sorted(p.name for p in Path(AF_DIR).glob("*.af")) == sorted(EXPECTED)
