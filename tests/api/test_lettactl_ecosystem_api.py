"""lettactl (nouamanecodes/lettactl 1.1.2), the kubectl-style fleet CLI, against memlet.

`lettactl apply -f fleet.yml` creates blocks (`POST /v1/blocks/`), tools from Python files (`POST /v1/tools/` with
the source only), then the agent with their ids. On every later apply it reads each agent back and diffs it with
the file: the SDK's `agents.retrieve` (a 1.x client, so no relationships), then a plain `fetch` of
`GET /v1/agents/{id}?include=agent.tags` whose `tools`, `memory.blocks`, `tags`, `description` and `llm_config` it
trusts; `lettactl get agents` counts blocks and tools from `GET /v1/agents/?limit=100&include=agent.tags`. Edits
go out as `PATCH /v1/agents/{id}?include=agent.tags` with the changed fields and the tags.

Node's `fetch` sends `user-agent: node` and no SDK header, so Letta 0.16.8 reads it as a pre-1.0 client; its
serializer then loads every relationship, but its query had already skipped those not in `include=`, so the
agent came back with no tools and no blocks, and lettactl planned to attach them all again on every apply. memlet
returns them all (a README compatibility note says so): a second apply of the same file sees no change.
"""

import httpx

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
NODE = {"user-agent": "node"}  # what Node's built-in fetch sends
TOOL_SOURCE = '''def recipe_generator(cuisine: str = "any") -> str:
    """
    Generate a recipe.

    Args:
        cuisine (str): The type of cuisine requested

    Returns:
        str: The recipe
    """
    return cuisine
'''


def _apply(http: httpx.Client) -> str:
    """The requests of lettactl's first apply of one agent with a block and a custom tool; its id."""
    block = http.post(
        "/v1/blocks/", json={"label": "notes", "description": "General notes", "value": "No notes yet\n", "limit": 2000}
    )
    tool = http.post("/v1/tools/", json={"source_code": TOOL_SOURCE})
    assert block.status_code == 200 and tool.status_code == 200, (block.text, tool.text)
    body = {
        "name": "recipe-assistant",
        "description": "AI chef",
        "model": MODEL,
        "system": "You are a chef.",
        "block_ids": [block.json()["id"]],
        "tool_ids": [tool.json()["id"]],
        "include_base_tools": True,
        "include_base_tool_rules": False,
        "context_window_limit": 32000,
        "reasoning": False,
        "tags": ["team:food"],
        "embedding": EMBEDDING,
    }
    created = http.post("/v1/agents/", json=body, headers=NODE)
    assert created.status_code == 200, created.text
    return str(created.json()["id"])


class TestReapply:
    def test_the_agent_read_back_carries_its_tools_blocks_and_tags(self, http: httpx.Client) -> None:
        agent_id = _apply(http)
        sdk = http.get(f"/v1/agents/{agent_id}", headers={"x-stainless-package-version": "1.7.8"}).json()
        assert sdk["tools"] == [] and sdk["memory"]["blocks"] == []  # why lettactl fetches it again

        raw = http.get(f"/v1/agents/{agent_id}", params={"include": "agent.tags"}, headers=NODE).json()
        tools = {t["name"]: t for t in raw["tools"]}
        assert {"recipe_generator", "memory_replace", "conversation_search"} <= set(tools)
        # What lettactl hashes to see whether the file's tool changed.
        assert tools["recipe_generator"]["source_code"] == TOOL_SOURCE
        assert [(b["label"], b["value"], b["limit"]) for b in raw["memory"]["blocks"]] == [
            ("notes", "No notes yet\n", 2000)
        ]
        assert raw["tags"] == ["team:food"] and raw["description"] == "AI chef" and raw["system"] == "You are a chef."
        assert raw["llm_config"]["handle"] == MODEL and raw["llm_config"]["context_window"] == 32000
        assert raw["llm_config"]["enable_reasoner"] is False and raw["embedding_config"]["handle"] == EMBEDDING

        listed = http.get("/v1/agents/", params={"limit": 100, "include": "agent.tags"}, headers=NODE).json()
        assert [(len(a["memory"]["blocks"]), len(a["tools"]) == len(tools), a["tags"]) for a in listed] == [
            (1, True, ["team:food"])
        ]

    def test_an_edited_file_updates_the_agent_in_place(self, http: httpx.Client) -> None:
        agent_id = _apply(http)
        edit = {"description": "AI chef, edited", "context_window_limit": 16000, "tags": ["env:dev", "team:food"]}
        patched = http.patch(f"/v1/agents/{agent_id}", params={"include": "agent.tags"}, json=edit, headers=NODE)
        assert patched.status_code == 200, patched.text

        raw = http.get(f"/v1/agents/{agent_id}", params={"include": "agent.tags"}, headers=NODE).json()
        assert raw["id"] == agent_id and raw["description"] == "AI chef, edited"
        assert raw["llm_config"]["context_window"] == 16000 and sorted(raw["tags"]) == ["env:dev", "team:food"]
        # Nothing else moved: the same tools and block, so the next apply of the edited file plans nothing.
        assert "recipe_generator" in {t["name"] for t in raw["tools"]}
        assert [b["label"] for b in raw["memory"]["blocks"]] == ["notes"]
