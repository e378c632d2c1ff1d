"""The stored json_schema of an MCP tool: `$ref`s inlined, `anyOf` duplicates merged, a well-formed top level."""

from memlet.mcp.tool_schema import MAX_DEPTH, function_schema, health, parameters_schema


def test_refs_are_inlined_and_defs_dropped() -> None:
    schema = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/P", "description": "who"}},
        "required": ["p"],
        "$defs": {"P": {"type": "object", "properties": {"a": {"$ref": "#/definitions/A"}}}},
        "definitions": {"A": {"type": "string"}},
        "title": "fArguments",
    }
    params = parameters_schema(schema)
    assert params == {
        "type": "object",
        "properties": {"p": {"type": "object", "properties": {"a": {"type": "string"}}, "description": "who"}},
        "required": ["p"],
    }


def test_a_self_reference_is_cut() -> None:
    schema = {
        "properties": {"n": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
    }
    node = parameters_schema(schema)["properties"]["n"]
    for _ in range(MAX_DEPTH - 1):
        node = node["properties"]["next"]
    assert node["properties"]["next"] == {"type": "object"}


def test_duplicate_anyof_members_merge_and_missing_parts_are_added() -> None:
    params = parameters_schema(
        {"properties": {"x": {"anyOf": [{"type": "string"}, {"type": "string"}, {"type": "null"}]}}}
    )
    assert params["properties"]["x"]["anyOf"] == [{"type": "string"}, {"type": "null"}]
    assert parameters_schema(None) == {"type": "object", "properties": {}, "required": []}
    assert function_schema("t", None, {"type": "object"})["description"] == ""


def test_health_grades_free_form_objects() -> None:
    assert health({"properties": {"a": {"type": "string"}}})["status"] == "STRICT_COMPLIANT"
    free = {
        "properties": {
            "f": {"anyOf": [{"type": "object", "additionalProperties": {"type": "string"}}, {"type": "null"}]}
        }
    }
    assert health(free)["status"] == "NON_STRICT_ONLY"


def test_health_grades_as_letta_names_them() -> None:
    """Letta's test_mcp_schema_validation cases, graded by memlet (which closes declared objects, not free ones)."""
    strict = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    assert health(strict) == {"status": "STRICT_COMPLIANT", "reasons": []}
    assert health({"type": "object", "properties": {}})["status"] == "STRICT_COMPLIANT"  # a zero-argument tool
    free = health({"type": "object", "properties": {"message": {"type": "object", "additionalProperties": {}}}})
    assert free["status"] == "NON_STRICT_ONLY" and "additionalProperties" in free["reasons"][0]
    for broken in (
        {"type": "object", "properties": {"data": {"description": "no type"}}},
        {"type": "object", "properties": {"items": {"type": "array"}}},
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
        {"type": "invalid_type"},
    ):
        assert health(broken)["status"] == "INVALID", broken
    assert "type" in health({"properties": {"data": {"title": "Data"}}})["reasons"][0]
    stored = function_schema("t", "d", {"type": "object", "properties": {"a": {"type": "array"}}})
    assert stored["mcp:SCHEMA_STATUS"] == "INVALID" and stored["mcp:SCHEMA_WARNINGS"]
