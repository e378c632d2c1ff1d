"""The Letta Code SDK (`@letta-ai/letta-code-sdk`, and letta-cowork built on it) against memlet: the calls Letta Code
makes for the SDK's sessions, driven with letta-client 1.12.1 and httpx as Letta Code sends them, and the published
SDK itself (tests/letta_code_sdk.py) for one whole session.

The SDK's `session.listMessages()` / `bootstrapState()` (Letta Code's `list_messages` / `bootstrap_session_state`
control requests) read a thread newest first (`order=desc`) and hand back `nextBefore`, the oldest id of the page.
Letta Code 0.19.5, the version the SDK pins, asks for the next page with `before=<that id>` and probes `hasMore` the
same way with `limit=1`; Letta Code 0.32 sends that id as `after` instead (the published-SDK test below runs 0.32).
"""

import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
from letta_client import Letta

from tests.api.test_conversations_api import EMBEDDING, MODEL, make_agent, send
from tests.conftest import LiveServer
from tests.letta_code_sdk import install, run_sdk
from tests.mock_llm import MockLLM, Reply


@pytest.fixture(autouse=True)
def _fresh_mock(mock_llm: MockLLM) -> None:
    mock_llm.reset()


def talk(http: httpx.Client, conversation_id: str, mock_llm: MockLLM, turns: int, **extra: Any) -> None:
    for n in range(turns):
        mock_llm.script(Reply.text(f"reply {n}"))
        send(http, conversation_id, f"message {n}", **extra)


def page(http: httpx.Client, conversation_id: str, **params: Any) -> list[str]:
    response = http.get(f"/v1/conversations/{conversation_id}/messages", params=params)
    assert response.status_code == 200, response.text
    return [m["id"] for m in response.json()]


def walk_back(http: httpx.Client, conversation_id: str, **params: Any) -> list[list[str]]:
    """Letta Code's `list_messages` paging: newest first, each next page `before` the oldest id seen."""
    pages = [page(http, conversation_id, order="desc", limit=2, **params)]
    while pages[-1] and len(pages) < 10:
        pages.append(page(http, conversation_id, order="desc", limit=2, before=pages[-1][-1], **params))
    return pages[:-1]


@pytest.mark.parametrize("thread", ["conversation", "default"])
def test_list_messages_pages_back_to_older_messages(
    client: Letta, http: httpx.Client, mock_llm: MockLLM, thread: str
) -> None:
    agent = make_agent(client)
    conversation = client.conversations.create(agent_id=agent.id).id if thread == "conversation" else "default"
    params = {"agent_id": agent.id} if thread == "default" else {}
    talk(http, conversation, mock_llm, 3, **params)
    newest_first = page(http, conversation, order="desc", limit=100, **params)
    assert len(newest_first) == 7  # the system message, then three turns of a user message and a reply
    # As on Letta, `before` is the older side whatever the order: the pages go back through the whole thread once.
    pages = walk_back(http, conversation, **params)
    assert [len(p) for p in pages] == [2, 2, 2, 1]
    assert [i for p in pages for i in p] == newest_first
    # Letta Code's `hasMore` probe: nothing is older than the thread's first message.
    assert page(http, conversation, order="desc", limit=1, before=newest_first[-1], **params) == []
    # Both cursors: the messages between them.
    between = page(http, conversation, order="desc", before=newest_first[1], after=newest_first[5], **params)
    assert between == newest_first[2:5]


def test_sdk_auto_pagination_still_walks_newest_first(client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
    # letta-client's pages ask for the next one with `after` = the last id: newest first, that walks to older rows.
    agent = make_agent(client)
    conversation = client.conversations.create(agent_id=agent.id).id
    talk(http, conversation, mock_llm, 3)
    walked = [m.id for m in client.conversations.messages.list(conversation, order="desc", limit=2)]
    assert walked == page(http, conversation, order="desc", limit=100)


SDK_SESSION = """
const tools = [{
  name: "get_weather", label: "Weather", description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  execute: async (id, args) => ({ content: [{ type: "text", text: `sdk-tool: sunny in ${args.city}` }] }),
}];
const s = createSession(AGENT, { permissionMode: "bypassPermissions", tools });
const events = [];
await s.send("Weather in Paris?");
for await (const m of s.stream()) {
  if (m.type === "tool_result") events.push({ type: m.type, content: m.content, isError: m.isError });
  if (m.type === "result") events.push({ type: m.type, success: m.success, result: m.result });
}
const turns = [(await s.runTurn("two")).result, (await s.runTurn("three")).result];
const pages = [];
let before;
for (let i = 0; i < 20; i++) {
  const p = await s.listMessages({ limit: 3, ...(before ? { before } : {}) });
  pages.push(p.messages.map((m) => m.id));
  if (!p.hasMore) break;
  before = p.nextBefore;
}
const all = (await s.listMessages({ limit: 100 })).messages.map((m) => m.id);
out = { conversation: s.conversationId, events, turns, pages, all };
s.close();
"""


@pytest.fixture(scope="session")
def letta_code_sdk() -> Path:
    return install()


@pytest.mark.skipif(shutil.which("node") is None, reason="the Letta Code SDK needs node")
@pytest.mark.timeout(300)
def test_the_published_sdk_runs_a_session_and_pages_back_its_history(
    letta_code_sdk: Path, server: LiveServer, client: Letta, mock_llm: MockLLM, tmp_path: Path
) -> None:
    # A new conversation of an agent, a client-side tool the SDK registers and runs, then the history paged back.
    agent = client.agents.create(model=MODEL, embedding=EMBEDDING)
    mock_llm.script(
        Reply.tool_call("get_weather", {"city": "Paris"}),
        Reply.text("Sunny, says the tool."),
        Reply.text("second"),
        Reply.text("third"),
    )
    out = run_sdk(letta_code_sdk, server.base_url, tmp_path, SDK_SESSION, AGENT=agent.id)
    # The tool's result as Letta Code shows it on running the tool, then as the server streams it back.
    *results, final = out["events"]
    assert results and all(
        r == {"type": "tool_result", "content": "sdk-tool: sunny in Paris", "isError": False} for r in results
    )
    assert final == {"type": "result", "success": True, "result": "Sunny, says the tool."}
    assert out["turns"] == ["second", "third"]
    assert any("sdk-tool: sunny in Paris" in str(m["content"]) for m in mock_llm.requests[1]["messages"])
    # Every message once, newest first, page after page (the last one may come back empty).
    walked = [i for p in out["pages"] for i in p]
    assert len(out["all"]) >= 10 and walked == out["all"]
