"""What Letta 0.16.8's tool manager tests (tests/managers/test_tool_manager.py) pin down, seen through /v1/tools
with the official letta-client (raw HTTP for the count route, which the SDK lacks)."""

import httpx
import pytest
from letta_client import BadRequestError, Letta

from tests.conftest import LiveServer


def source(name: str, doc: str = "Do a thing.") -> str:
    return f'def {name}() -> str:\n    """{doc}\n\n    Returns:\n        str: Something.\n    """\n    return "x"\n'


def in_project(server: LiveServer, project_id: str) -> Letta:
    """A client made with Letta's `project_id` option, which sends it as the `X-Project-Id` header."""
    return Letta(base_url=server.base_url, max_retries=0, timeout=60, project_id=project_id)


class TestProjectScope:
    """test_list_tools_with_project_id_filtering / test_count_tools_with_project_id_filtering: a tool made with a
    project belongs to it; a listing or count with a project sees its tools and the global ones only."""

    def test_listing_and_count_see_the_project_and_global_tools(
        self, client: Letta, server: LiveServer, http: httpx.Client
    ) -> None:
        global_tool = client.tools.create(source_code=source("count_global"))
        a_tools = [in_project(server, "project-a").tools.create(source_code=source(f"count_a_{i}")) for i in range(3)]
        b_tool = in_project(server, "project-b").tools.create(source_code=source("count_b"))
        assert global_tool.project_id is None
        assert {t.project_id for t in a_tools} == {"project-a"} and b_tool.project_id == "project-b"

        def names(listing_client: Letta) -> set[str]:
            return {t.name or "" for t in listing_client.tools.list(tool_types=["custom"], limit=100)}

        assert names(client) == {"count_global", "count_a_0", "count_a_1", "count_a_2", "count_b"}
        assert names(in_project(server, "project-a")) == {"count_global", "count_a_0", "count_a_1", "count_a_2"}
        assert names(in_project(server, "project-b")) == {"count_global", "count_b"}
        assert names(in_project(server, "project-none")) == {"count_global"}

        def count(project: str | None) -> int:
            headers = {"X-Project-Id": project} if project else {}
            params = {"tool_types": "custom", "search": "count_"}
            return int(http.get("/v1/tools/count", params=params, headers=headers).json())

        assert [count(None), count("project-a"), count("project-b"), count("project-none")] == [5, 4, 2, 1]

    def test_built_in_tools_are_global(self, server: LiveServer, client: Letta) -> None:
        scoped = in_project(server, "project-a").tools.list(return_only_letta_tools=True, limit=100).items
        assert {t.name for t in scoped} == {t.name for t in client.tools.list(return_only_letta_tools=True, limit=100)}

    def test_upsert_takes_the_project_and_an_upsert_without_one_makes_it_global(
        self, client: Letta, server: LiveServer
    ) -> None:
        scoped = in_project(server, "project-a").tools.upsert(source_code=source("upserted"))
        assert scoped.project_id == "project-a"
        again = client.tools.upsert(source_code=source("upserted", "Again."))
        assert again.id == scoped.id and again.project_id is None


class TestCountOnlyFilter:
    def test_exclude_letta_tools_narrows_the_count_not_the_listing(self, client: Letta, http: httpx.Client) -> None:
        """Letta's list route has no `exclude_letta_tools` (the query parameter is ignored); its count has."""
        client.tools.create(source_code=source("mine"))
        assert http.get("/v1/tools/count", params={"exclude_letta_tools": True}).json() == 1
        listed = http.get("/v1/tools/", params={"exclude_letta_tools": True, "limit": 100}).json()
        assert "send_message" in {t["name"] for t in listed} and "mine" in {t["name"] for t in listed}


class TestListCursors:
    def test_a_cursor_naming_no_tool_is_ignored(self, client: Letta) -> None:
        """Letta's list looks the cursor up and, finding no tool, pages from the start."""
        made = [client.tools.create(source_code=source(f"cursor_{i}")).id for i in range(3)]
        gone = client.tools.create(source_code=source("cursor_gone")).id
        client.tools.delete(gone)
        for cursor in ("after", "before"):
            page = client.tools.list(tool_types=["custom"], order="asc", limit=10, **{cursor: gone})  # type: ignore[arg-type]
            assert [t.id for t in page.items] == made


class TestModifySchema:
    def test_new_json_schema_is_stored_whole_and_the_description_stays(self, client: Letta) -> None:
        """test_update_tool_with_json_schema: the schema sent is stored as it is; the tool's own description is
        not touched (Letta copies a schema's description only when a tool is created)."""
        tool = client.tools.create(
            source_code='def upd() -> str:\n    return "hello"\n',
            json_schema={"name": "upd", "description": "Original"},
        )
        assert tool.description == "Original"
        new_schema = {
            "name": "upd",
            "description": "Updated description",
            "parameters": {"type": "object", "properties": {"new_arg": {"type": "string"}}, "required": ["new_arg"]},
        }
        updated = client.tools.update(tool.id, json_schema=new_schema)
        assert updated.json_schema == new_schema
        assert updated.description == "Original"
        assert client.tools.retrieve(tool.id).description == "Original"

    def test_args_json_schema_with_new_source_keeps_the_description(self, client: Letta) -> None:
        """test_update_tool_with_args_json_schema: the schema takes the new docstring and parameters."""
        tool = client.tools.create(source_code='def fn() -> str:\n    """Original function"""\n    return "hello"\n')
        assert tool.description == "Original function"
        new_source = 'def fn(new_arg: str) -> str:\n    """Updated function"""\n    return new_arg\n'
        args = {
            "type": "object",
            "properties": {"new_arg": {"type": "string", "description": "New argument"}},
            "required": ["new_arg"],
        }
        updated = client.tools.update(tool.id, source_code=new_source, args_json_schema=args)
        assert updated.json_schema == {
            "name": "fn",
            "description": "Updated function",
            "parameters": {
                "type": "object",
                "properties": {"new_arg": {"type": "string", "description": "New argument"}},
                "required": ["new_arg"],
            },
        }
        assert updated.description == "Original function"

    def test_json_schema_wins_over_args_json_schema_sent_with_it(self, client: Letta) -> None:
        tool = client.tools.create(source_code=source("both"))
        schema = {"name": "both", "description": "Given.", "parameters": {"type": "object", "properties": {}}}
        args = {"type": "object", "properties": {"y": {"type": "string", "description": "Y."}}, "required": []}
        updated = client.tools.update(tool.id, json_schema=schema, args_json_schema=args)
        assert updated.json_schema == schema
        assert updated.args_json_schema == args

    def test_schema_naming_another_function_renames_the_tool(self, client: Letta) -> None:
        """test_update_tool_name."""
        schema = {"name": "original_name", "description": "Test", "parameters": {"type": "object", "properties": {}}}
        tool = client.tools.create(source_code="def original_name(): pass", json_schema=schema)
        matching = {**schema, "name": "matched_name"}
        updated = client.tools.update(tool.id, json_schema=matching)
        assert updated.name == "matched_name" and updated.json_schema == matching

    def test_a_modify_without_enable_parallel_execution_keeps_it(self, client: Letta) -> None:
        """memlet's choice (README): Letta's modify set the flag back to false whenever the body did not send it."""
        tool = client.tools.create(source_code=source("parallel"), enable_parallel_execution=True)
        assert client.tools.update(tool.id, description="New.").enable_parallel_execution is True

    def test_tool_hash_is_the_one_made_at_creation(self, client: Letta) -> None:
        """Letta computes `metadata_.tool_hash` when a tool is created or upserted, not when it is modified."""
        tool = client.tools.create(source_code=source("hashed"), pip_requirements=[{"name": "requests"}])
        assert tool.metadata is not None
        updated = client.tools.update(
            tool.id, source_code=source("hashed", "Changed."), pip_requirements=[{"name": "numpy", "version": "2"}]
        )
        assert updated.metadata == tool.metadata
        upserted = client.tools.upsert(source_code=source("hashed", "Upserted."))
        assert upserted.metadata is not None and upserted.metadata["tool_hash"] != tool.metadata["tool_hash"]


class TestBuiltInTools:
    def test_a_schema_sent_for_a_built_in_tool_changes_nothing(self, client: Letta, http: httpx.Client) -> None:
        """Letta's built-in tools show the schema their code defines whatever was stored; other fields change."""
        tool = next(iter(client.tools.list(name="conversation_search")))
        schema = {**(tool.json_schema or {}), "description": "Mine.", "name": "renamed_search"}
        try:
            updated = client.tools.update(tool.id, json_schema=schema, description="My words.", return_char_limit=777)
            assert updated.name == "conversation_search" and updated.json_schema == tool.json_schema
            assert updated.description == "My words." and updated.return_char_limit == 777
            fetched = client.tools.retrieve(tool.id)
            assert fetched.name == "conversation_search" and fetched.json_schema == tool.json_schema
        finally:  # the built-in tools outlive a test: put this one back as it was
            http.post("/v1/tools/add-base-tools").raise_for_status()
        restored = client.tools.retrieve(tool.id)
        assert restored.description == tool.description and restored.return_char_limit == tool.return_char_limit


class TestCreateSchema:
    def test_args_json_schema_takes_the_parameters_and_the_docstring_the_description(self, client: Letta) -> None:
        """test_create_tool_with_docstring_and_args_schema."""
        code = 'def fn(old_arg: str) -> str:\n    """Old docstring that should be overridden"""\n    return old_arg\n'
        args = {
            "type": "object",
            "properties": {"new_arg": {"type": "string", "description": "New argument from schema"}},
            "required": ["new_arg"],
        }
        tool = client.tools.create(source_code=code, args_json_schema=args)
        assert tool.json_schema == {
            "name": "fn",
            "description": "Old docstring that should be overridden",
            "parameters": {
                "type": "object",
                "properties": {"new_arg": {"type": "string", "description": "New argument from schema"}},
                "required": ["new_arg"],
            },
        }

    def test_docstring_schema_with_a_defaulted_argument(self, client: Letta) -> None:
        """test_create_tool_with_docstring_no_schema."""
        code = (
            "def fn(arg1: str, arg2: int = 5) -> str:\n    '''\n    This is a test function\n\n    Args:\n"
            "        arg1: First argument\n        arg2: Second argument\n\n    Returns:\n        A string result\n"
            "    '''\n    return f\"{arg1} {arg2}\"\n"
        )
        tool = client.tools.create(source_code=code)
        assert tool.json_schema == {
            "name": "fn",
            "description": "This is a test function",
            "parameters": {
                "type": "object",
                "properties": {
                    "arg1": {"type": "string", "description": "First argument"},
                    "arg2": {"type": "integer", "description": "Second argument"},
                },
                "required": ["arg1"],
            },
        }

    def test_no_docstring_and_no_schema_is_400(self, client: Letta) -> None:
        """test_error_no_docstring_or_schema."""
        with pytest.raises(BadRequestError) as info:
            client.tools.create(source_code="def fn():\n    pass\n")
        assert "missing docstring" in str(info.value.body)

    def test_pip_requirements_round_trip_and_clear(self, client: Letta) -> None:
        """test_pip_requirements_roundtrip / test_update_tool_clear_pip_requirements."""
        reqs = [
            {"name": "requests", "version": "2.28.0"},
            {"name": "flask", "version": "2.0"},
            {"name": "django", "version": "4.1.0-beta"},
            {"name": "numpy"},
        ]
        tool = client.tools.create(source_code=source("deps"), pip_requirements=reqs)  # type: ignore[arg-type]
        fetched = client.tools.retrieve(tool.id)
        assert [(r.name, r.version) for r in fetched.pip_requirements or []] == [
            ("requests", "2.28.0"),
            ("flask", "2.0"),
            ("django", "4.1.0-beta"),
            ("numpy", None),
        ]
        assert client.tools.update(tool.id, pip_requirements=[]).pip_requirements == []
        assert client.tools.create(source_code=source("nodeps")).pip_requirements is None
