"""Helpers shared by the agent-file API tests: the shared `.af` files, import with waiting, export, row counts."""

import json
import time
from typing import Any

import httpx
from letta_client import Letta

from tests.shared_paths import SHARED

AF_DIR = SHARED / "letta" / "agent-files"
MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"

# file: (blocks, tools, stored messages, in-context messages)
EXPECTED = {
    "customer_service.af": (2, 10, 4, 4),
    "deep_research_agent.af": (3, 5, 4, 4),
    "knowledge-base.af": (2, 4, 13, 13),
    "memgpt_agent_with_convo.af": (2, 6, 91, 11),
    "test_agent_with_files_and_sources.af": (2, 7, 7, 7),
    "test_basic_agent_with_blocks_tools_messages_v2.af": (3, 7, 7, 7),
}


def raw(name: str) -> bytes:
    return (AF_DIR / name).read_bytes()


def import_bytes(client: Letta, data: bytes, **options: Any) -> list[str]:
    """Import, then wait for the imported files' background embedding (the test's cleanup must not race it)."""
    response = client.agents.import_file(file=("agent.af", data, "application/json"), **options)
    for agent_id in response.agent_ids:
        for folder in client.agents.folders.list(agent_id):
            wait_files(client, folder.id)
    return list(response.agent_ids)


def export(http: httpx.Client, agent_id: str, **params: Any) -> dict[str, Any]:
    response = http.get(f"/v1/agents/{agent_id}/export", params=params)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def counts(http: httpx.Client) -> dict[str, int]:
    """Rows an import could leave behind, by table (base tools are always there and never change)."""
    result = {}
    for path in ("/v1/agents/count", "/v1/blocks/count", "/v1/folders/count"):
        result[path] = http.get(path).json()
    result["tools"] = http.get("/v1/tools/count").json()
    return result


def wait_files(client: Letta, folder_id: str, timeout: float = 20) -> list[Any]:
    deadline = time.monotonic() + timeout
    while True:
        files = list(client.folders.files.list(folder_id))
        if all(f.processing_status in ("completed", "error") for f in files) or time.monotonic() > deadline:
            return files
        time.sleep(0.1)


def v2() -> dict[str, Any]:
    return json.loads(raw("test_basic_agent_with_blocks_tools_messages_v2.af"))  # type: ignore[no-any-return]
