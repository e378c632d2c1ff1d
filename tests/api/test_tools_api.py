"""/v1/tools through the official letta-client (and raw HTTP for routes the 1.x SDK lacks)."""

import hashlib

import httpx
import pytest
from letta_client import BadRequestError, Letta, NotFoundError

ROLL = '''
from typing import Literal, Optional

def roll_dice(sides: int, times: Optional[int] = None, labels: list[str] = [], mode: Literal["fair", "loaded"] = "fair", scale: float = 1.0) -> str:
    """Roll a die and report the result.

    Args:
        sides (int): Number of sides of the die.
        times (Optional[int]): How many rolls to make.
        labels (list[str]): Names for the rolls.
        mode: Whether the die is fair.
        scale: Factor applied to each roll.

    Returns:
        str: The outcome.
    """
    return str(sides)
'''

# Letta 0.16.8's built-in tools and their tool types (letta/constants.py, tool_manager.upsert_base_tools_async).
LETTA_BASE_TOOLS = {
    "send_message": "letta_core",
    "conversation_search": "letta_core",
    "archival_memory_insert": "letta_core",
    "archival_memory_search": "letta_core",
    "core_memory_append": "letta_memory_core",
    "core_memory_replace": "letta_memory_core",
    "memory": "letta_memory_core",
    "memory_apply_patch": "letta_memory_core",
    "memory_replace": "letta_sleeptime_core",
    "memory_insert": "letta_sleeptime_core",
    "memory_rethink": "letta_sleeptime_core",
    "memory_finish_edits": "letta_sleeptime_core",
    "send_message_to_agent_and_wait_for_reply": "letta_multi_agent_core",
    "send_message_to_agents_matching_tags": "letta_multi_agent_core",
    "send_message_to_agent_async": "letta_multi_agent_core",
    "store_memories": "letta_voice_sleeptime_core",
    "rethink_user_memory": "letta_voice_sleeptime_core",
    "finish_rethinking_memory": "letta_voice_sleeptime_core",
    "search_memory": "letta_voice_sleeptime_core",
    "run_code": "letta_builtin",
    "run_code_with_tools": "letta_builtin",
    "web_search": "letta_builtin",
    "fetch_webpage": "letta_builtin",
    "open_files": "letta_files_core",
    "grep_files": "letta_files_core",
    "semantic_search_files": "letta_files_core",
}


def source(name: str, doc: str = "Do a thing.") -> str:
    return f'def {name}(x: int) -> int:\n    """{doc}\n\n    Args:\n        x: A number.\n    """\n    return x\n'


class TestCreateTool:
    def test_schema_derived_from_signature_and_docstring(self, client: Letta) -> None:
        tool = client.tools.create(source_code=ROLL, tags=["dice"])
        assert tool.id.startswith("tool-")
        assert tool.name == "roll_dice"
        assert tool.tool_type == "custom"
        assert tool.source_type == "json" and tool.args_json_schema == {}  # Letta's column defaults
        assert tool.metadata["tool_hash"] == hashlib.sha256(f"{ROLL}||".encode()).hexdigest()[:12]  # type: ignore[index]
        assert tool.description == "Roll a die and report the result."
        assert tool.tags == ["dice"]
        assert tool.json_schema == {
            "name": "roll_dice",
            "description": "Roll a die and report the result.",
            "parameters": {
                "type": "object",
                "properties": {
                    "sides": {"type": "integer", "description": "Number of sides of the die."},
                    "times": {"type": "integer", "description": "How many rolls to make."},
                    "labels": {"type": "array", "items": {"type": "string"}, "description": "Names for the rolls."},
                    "mode": {"type": "string", "enum": ["fair", "loaded"], "description": "Whether the die is fair."},
                    "scale": {"type": "number", "description": "Factor applied to each roll."},
                },
                "required": ["sides"],
            },
        }
        assert client.tools.retrieve(tool.id).json_schema == tool.json_schema

    def test_source_type_is_stored_as_sent(self, client: Letta) -> None:
        """Letta stores a request's `source_type` only when it is sent; an upsert without one writes "json"."""
        tool = client.tools.create(source_code=source("typed"), source_type="python")
        assert tool.source_type == "python"
        again = client.tools.upsert(source_code=source("typed"))
        assert again.id == tool.id and again.source_type == "json"
        updated = client.tools.update(tool.id, source_code=source("typed", "Rewritten."))
        assert updated.description == "Rewritten."  # "json" source is Python: the schema is derived again

    def test_explicit_json_schema_is_kept(self, client: Letta) -> None:
        schema: dict[str, object] = {
            "name": "shout",
            "description": "Shout.",
            "parameters": {"type": "object", "properties": {}},
        }
        tool = client.tools.create(source_code="def shout():\n    return 'HEY'\n", json_schema=schema)
        assert tool.name == "shout"
        assert tool.json_schema == schema
        assert tool.description == "Shout."

    def test_syntax_error_is_400_with_the_line(self, client: Letta) -> None:
        with pytest.raises(BadRequestError) as info:
            client.tools.create(source_code="def ok():\n    return 1\n\ndef broken(:\n    pass\n")
        assert info.value.status_code == 400
        assert "line 4" in str(info.value.body)

    def test_missing_argument_description_is_400(self, client: Letta) -> None:
        with pytest.raises(BadRequestError):
            client.tools.create(source_code='def f(x: int) -> int:\n    """Do it."""\n    return x\n')

    def test_same_name_again_updates_in_place_as_letta(self, client: Letta) -> None:
        first = client.tools.create(source_code=source("twice"))
        second = client.tools.create(source_code=source("twice", "Another doc."))
        assert second.id == first.id
        assert second.description == "Another doc."
        assert len(client.tools.list(name="twice").items) == 1


class TestUpsertTool:
    def test_same_name_updates_in_place(self, client: Letta) -> None:
        first = client.tools.upsert(source_code=source("evolving", "First version."))
        second = client.tools.upsert(source_code=source("evolving", "Second version."))
        assert second.id == first.id
        assert second.description == "Second version."
        assert len(client.tools.list(name="evolving").items) == 1


class TestListTools:
    def test_pages_walk_every_tool_once_in_both_orders(self, client: Letta) -> None:
        made = [client.tools.create(source_code=source(f"paged_{i}")).id for i in range(5)]
        asc = [t.id for t in client.tools.list(tool_types=["custom"], order="asc", limit=2)]
        desc = [t.id for t in client.tools.list(tool_types=["custom"], order="desc", limit=2)]
        assert asc == made
        assert desc == made[::-1]

    def test_before_cursor_walks_backwards(self, client: Letta) -> None:
        made = [client.tools.create(source_code=source(f"back_{i}")).id for i in range(4)]
        page = client.tools.list(tool_types=["custom"], order="asc", before=made[3], limit=2)
        assert [t.id for t in page.items] == made[1:3]
        assert [t.id for t in page] == [made[1], made[2], made[0]]  # the SDK pages on with before=items[0]

    def test_filters(self, client: Letta) -> None:
        a = client.tools.create(source_code=source("filter_apple"))
        b = client.tools.create(source_code=source("filter_banana"))
        assert [t.id for t in client.tools.list(name="filter_apple").items] == [a.id]
        assert {t.id for t in client.tools.list(names=["filter_apple", "filter_banana"]).items} == {a.id, b.id}
        assert [t.id for t in client.tools.list(search="BANAN").items] == [b.id]
        assert [t.id for t in client.tools.list(tool_ids=[b.id]).items] == [b.id]
        letta_only = client.tools.list(return_only_letta_tools=True, limit=100).items
        assert letta_only and all((t.tool_type or "").startswith("letta_") for t in letta_only)
        no_custom = client.tools.list(exclude_tool_types=["custom"], limit=100).items
        assert a.id not in {t.id for t in no_custom}

    def test_limit_zero_lists_nothing(self, client: Letta, http: httpx.Client) -> None:
        client.tools.create(source_code=source("limited"))
        assert http.get("/v1/tools/", params={"limit": 0}).json() == []  # Letta's LIMIT 0
        assert http.get("/v1/tools/", params={"limit": 0, "search": "limited"}).json() == []
        assert len(http.get("/v1/tools/", params={"limit": 100}).json()) == len(LETTA_BASE_TOOLS) + 1

    def test_search_matches_percent_and_underscore_literally(self, client: Letta, http: httpx.Client) -> None:
        plain = client.tools.create(source_code=source("plainname"))
        under = client.tools.create(source_code=source("under_score"))
        assert [t["id"] for t in http.get("/v1/tools/", params={"search": "r_s"}).json()] == [under.id]
        assert http.get("/v1/tools/", params={"search": "%"}).json() == []  # Letta: a wildcard, every tool
        assert http.get("/v1/tools/count", params={"search": "_"}).json() == len(
            [n for n in [*LETTA_BASE_TOOLS, "under_score"] if "_" in n]
        )
        assert plain.id not in {t["id"] for t in http.get("/v1/tools/", params={"search": "_", "limit": 100}).json()}

    def test_newest_first_by_default(self, client: Letta) -> None:
        created = client.tools.create(source_code=source("newest"))
        assert client.tools.list().items[0].id == created.id

    def test_comma_separated_lists_and_bad_type(self, http: httpx.Client) -> None:
        response = http.get("/v1/tools/", params={"tool_types": "letta_core,letta_builtin", "limit": 100})
        assert response.status_code == 200
        assert {t["tool_type"] for t in response.json()} == {"letta_core", "letta_builtin"}
        bad = http.get("/v1/tools/", params={"tool_types": "nope"})
        assert bad.status_code == 400
        assert "Invalid tool_type 'nope'" in bad.json()["detail"]


class TestCountTools:
    def test_counts_with_filters(self, client: Letta, http: httpx.Client) -> None:
        client.tools.create(source_code=source("counted_one"))
        client.tools.create(source_code=source("counted_two"))
        total = len(LETTA_BASE_TOOLS) + 2
        assert http.get("/v1/tools/count").json() == total
        assert http.get("/v1/tools/count", params={"search": "counted"}).json() == 2
        assert http.get("/v1/tools/count", params={"exclude_letta_tools": True}).json() == 2
        assert http.get("/v1/tools/count", params={"tool_types": "letta_core"}).json() == 4


class TestRetrieveModifyDelete:
    def test_update_fields(self, client: Letta) -> None:
        tool = client.tools.create(source_code=source("modifiable"))
        updated = client.tools.update(tool.id, tags=["sdk_test"], return_char_limit=300)
        assert updated.tags == ["sdk_test"]
        assert updated.return_char_limit == 300
        assert updated.json_schema == tool.json_schema
        assert client.tools.retrieve(tool.id).return_char_limit == 300

    def test_update_source_rederives_schema(self, client: Letta) -> None:
        tool = client.tools.create(source_code=source("rewritten", "Old words."))
        new_source = source("rewritten", "New words.").replace("x: int", "x: int, y: str = 'a'")
        new_source = new_source.replace("x: A number.", "x: A number.\n        y: A label.")
        updated = client.tools.update(tool.id, source_code=new_source)
        assert updated.description == "New words."
        assert updated.json_schema is not None
        assert set(updated.json_schema["parameters"]["properties"]) == {"x", "y"}  # type: ignore[index]

    def test_update_source_without_a_schema_keeps_the_stored_one(self, client: Letta) -> None:
        """A source whose schema cannot be derived (no argument docs) is stored, with the old schema, as Letta
        stores every new source."""
        tool = client.tools.create(source_code=source("kept", "Old words."))
        bare = 'def kept(x: int, z: int) -> int:\n    """No argument docs."""\n    return x + z\n'
        updated = client.tools.update(tool.id, source_code=bare)
        assert updated.source_code == bare
        assert updated.json_schema == tool.json_schema and updated.description == "Old words."

    def test_delete_then_404(self, client: Letta) -> None:
        tool = client.tools.create(source_code=source("doomed"))
        client.tools.delete(tool.id)
        with pytest.raises(NotFoundError) as info:
            client.tools.retrieve(tool.id)
        assert tool.id in str(info.value.body)
        with pytest.raises(NotFoundError):
            client.tools.delete(tool.id)
        with pytest.raises(NotFoundError):
            client.tools.update(tool.id, tags=["x"])

    def test_malformed_id_is_422(self, http: httpx.Client) -> None:
        assert http.get("/v1/tools/tool-123").status_code == 422


class TestBaseTools:
    def test_present_from_startup_with_letta_names_and_types(self, client: Letta) -> None:
        tools = {t.name: t for t in client.tools.list(return_only_letta_tools=True, limit=100)}
        assert {name: t.tool_type for name, t in tools.items()} == LETTA_BASE_TOOLS
        send = tools["send_message"]
        assert send.source_code is None
        assert send.tags == ["letta_core"]
        assert send.json_schema is not None
        assert send.json_schema["name"] == "send_message"
        assert send.json_schema["parameters"]["required"] == ["message"]  # type: ignore[index]
        assert send.description

    def test_add_base_tools_is_idempotent(self, client: Letta, http: httpx.Client) -> None:
        before = {t.name: t.id for t in client.tools.list(return_only_letta_tools=True, limit=100)}
        response = http.post("/v1/tools/add-base-tools")
        assert response.status_code == 200
        assert {t["name"]: t["id"] for t in response.json()} == before

    def test_listing_recreates_a_deleted_base_tool(self, client: Letta, http: httpx.Client) -> None:
        """Letta's tool list upserts the built-in tools when one is missing from a first page."""
        gone = next(t for t in client.tools.list(name="web_search"))
        client.tools.delete(gone.id)
        try:
            assert list(client.tools.list(name="web_search")) == []  # a filtered page cannot tell: nothing is created
            listed = {t.name: t for t in client.tools.list(limit=100)}
            assert set(LETTA_BASE_TOOLS) <= set(listed)
            assert listed["web_search"].id != gone.id and listed["web_search"].tool_type == "letta_builtin"
        finally:
            http.post("/v1/tools/add-base-tools")


class TestRunToolFromSource:
    def test_runs_source_and_returns_tool_return_message(self, http: httpx.Client) -> None:
        code = 'def add(a: int, b: int) -> dict:\n    """Add.\n\n    Args:\n        a: x\n        b: y\n    """\n    print("adding")\n    return {"sum": a + b}\n'
        response = http.post("/v1/tools/run", json={"source_code": code, "args": {"a": 2, "b": 3}})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["message_type"] == "tool_return_message"
        assert body["status"] == "success"
        assert body["tool_return"] == "{'sum': 5}"
        assert body["stdout"] == ["adding\n"]
        assert body["tool_returns"][0]["status"] == "success"

    def test_tool_exception_is_error_status(self, http: httpx.Client) -> None:
        code = "def boom():\n    raise ValueError('bad input')\n"
        response = http.post("/v1/tools/run", json={"source_code": code, "args": {}, "name": "boom"})
        assert response.status_code == 200
        body = response.json()
        assert body["status"] == "error"
        assert body["tool_return"] == "Error executing function boom: ValueError: bad input"

    def test_env_vars_reach_the_tool(self, http: httpx.Client) -> None:
        code = "import os\n\ndef secret() -> str:\n    return os.environ['MY_SECRET']\n"
        response = http.post(
            "/v1/tools/run",
            json={"source_code": code, "args": {}, "name": "secret", "env_vars": {"MY_SECRET": "s3"}},
        )
        assert response.json()["tool_return"] == "s3"
