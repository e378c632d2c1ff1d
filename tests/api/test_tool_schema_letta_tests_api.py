"""What Letta 0.16.8's schema tests (tests/test_tool_schema_parsing.py and its fixture files) pin down about the
schema a Python tool gets from its source, seen through /v1/tools with the official letta-client: the 400s (never a
500) and their texts when a source or an `args_json_schema` cannot be turned into a schema."""

from typing import Any

import pytest
from letta_client import BadRequestError, Letta

from tests.mock_llm import MockLLM, Reply

ARGS_DOC = '    """Do a thing.\n\n    Args:\n        x: The x.\n    """\n'
SOURCE = f"def act(**kwargs) -> str:\n{ARGS_DOC}    return 'ok'\n"
MODEL = "openai/gpt-4o-mini"
TYPE_MAP = (
    "{<class 'int'>: 'integer', <class 'str'>: 'string', <class 'bool'>: 'boolean', <class 'float'>: 'number', "
    "None: 'null'}"
)


def detail(info: pytest.ExceptionInfo[BadRequestError]) -> str:
    assert info.value.status_code == 400
    body = info.value.body
    assert isinstance(body, dict)
    return str(body["detail"])


def args_error(client: Letta, args: dict[str, Any], source: str = SOURCE) -> str:
    with pytest.raises(BadRequestError) as info:
        client.tools.create(source_code=source, args_json_schema=args)
    return detail(info)


def source_error(client: Letta, source: str) -> str:
    with pytest.raises(BadRequestError) as info:
        client.tools.create(source_code=source)
    return detail(info)


class TestArgsJsonSchemaErrors:
    """Letta turns an `args_json_schema` into Python types before it renders the schema; what it cannot convert is
    a 400 in its own words."""

    def test_a_list_of_types_is_a_400(self, client: Letta) -> None:
        args = {"type": "object", "properties": {"x": {"type": ["string", "null"], "description": "X."}}}
        assert args_error(client, args) == (
            "Unable to convert pydantic field schema to type: {'type': ['string', 'null'], 'description': 'X.'}"
        )

    def test_a_list_of_types_inside_a_model_is_a_400(self, client: Letta) -> None:
        args = {
            "$defs": {"Inner": {"type": "object", "properties": {"y": {"type": ["integer"]}}}},
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/Inner"}},
        }
        assert args_error(client, args) == "Unable to convert pydantic field schema to type: {'type': ['integer']}"

    def test_a_property_without_a_type_is_a_400(self, client: Letta) -> None:
        args = {"type": "object", "properties": {"x": {"enum": ["a", "b"]}}}
        assert args_error(client, args) == "Unable to convert pydantic field schema to type: {'enum': ['a', 'b']}"

    def test_an_unknown_reference(self, client: Letta) -> None:
        args = {"type": "object", "properties": {"x": {"$ref": "#/$defs/Missing"}}}
        assert args_error(client, args) == "Reference Missing not found in nested models"

    def test_a_closed_free_object(self, client: Letta) -> None:
        args = {"type": "object", "properties": {"x": {"type": "object", "additionalProperties": False}}}
        assert args_error(client, args) == "additionalProperties=false is not supported."

    def test_a_map_with_typed_values(self, client: Letta) -> None:
        args = {
            "type": "object",
            "properties": {
                "x": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "integer"}}}
            },
        }
        assert args_error(client, args) == (
            "Dictionary types typing.Dict[str, typing.List[int]] with nested type arguments are not supported "
            "(consider using a Pydantic model instead)"
        )

    def test_a_union(self, client: Letta) -> None:
        args = {"type": "object", "properties": {"x": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}
        assert args_error(client, args) == "General Union types are not yet supported"

    def test_a_source_without_a_function(self, client: Letta) -> None:
        args = {"type": "object", "properties": {"x": {"type": "string"}}}
        assert args_error(client, args, source="x = 1\n") == (
            "Failed to parse function name and docstring: No function definition found in source code"
        )

    def test_a_source_that_does_not_parse(self, client: Letta) -> None:
        args = {"type": "object", "properties": {"x": {"type": "string"}}}
        message = args_error(client, args, source="def broken(:\n    pass\n")
        assert message.startswith("Failed to parse function name and docstring: invalid syntax")


class TestSourceErrors:
    """Letta derives the schema from the signature and docstring; a type it has no JSON type for, or a model that
    never ends, is a 400."""

    def test_an_unknown_type_lists_the_types_letta_maps(self, client: Letta) -> None:
        source = f"from datetime import datetime\n\ndef act(x: datetime) -> str:\n{ARGS_DOC}    return 'ok'\n"
        assert source_error(client, source) == (
            "Failed to derive json schema: Schema generation failed: Value error in schema generation: "
            f"Python type datetime has no corresponding JSON schema type - full map: {TYPE_MAP}"
        )

    @pytest.mark.parametrize(
        "models",
        [
            'class Node(BaseModel):\n    child: "Node" = Field(..., description="The child.")\n',
            'class Node(BaseModel):\n    children: List["Node"] = Field(..., description="The children.")\n',
            'class Node(BaseModel):\n    other: "Leaf" = Field(..., description="The leaf.")\n\n'
            'class Leaf(BaseModel):\n    back: Node = Field(..., description="Back.")\n',
        ],
        ids=["itself", "a list of itself", "through another model"],
    )
    def test_a_model_that_refers_to_itself_is_a_400(self, client: Letta, models: str) -> None:
        source = (
            "from typing import List\nfrom pydantic import BaseModel, Field\n\n"
            f"{models}\n\ndef act(x: Node) -> str:\n{ARGS_DOC}    return 'ok'\n"
        )
        assert source_error(client, source) == (
            "Failed to derive json schema: Schema generation failed: "
            "Unexpected error in schema generation: maximum recursion depth exceeded"
        )


class TestPydanticModels:
    """list_of_pydantic_example: a list of models is an array of objects built from the model's fields; Letta
    rebuilds the model from its fields alone, so its docstring does not become a description."""

    def test_a_list_of_models(self, client: Letta) -> None:
        source = (
            "from pydantic import BaseModel, Field\n\n\n"
            "class Step(BaseModel):\n"
            '    """One step of a plan."""\n\n'
            '    name: str = Field(..., description="What to do.")\n'
            '    minutes: int = Field(5, description="How long it takes.")\n\n\n'
            "def plan(steps: list[Step]) -> str:\n"
            '    """Make a plan.\n\n    Args:\n        steps: The steps, in order.\n    """\n'
            "    return 'ok'\n"
        )
        tool = client.tools.create(source_code=source)
        assert tool.json_schema == {
            "name": "plan",
            "description": "Make a plan.",
            "parameters": {
                "type": "object",
                "properties": {
                    "steps": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string", "description": "What to do."},
                                "minutes": {"type": "integer", "description": "How long it takes."},
                            },
                            "required": ["name"],
                        },
                        "description": "The steps, in order.",
                    }
                },
                "required": ["steps"],
            },
        }


class TestDocstrings:
    def test_an_argument_documented_twice_keeps_its_first_description(self, client: Letta) -> None:
        source = 'def act(x: int) -> str:\n    """Act.\n\n    :param x: The first words.\n    :param x: Later words.\n    """\n'
        tool = client.tools.create(source_code=source)
        assert tool.json_schema["parameters"]["properties"]["x"] == {
            "type": "integer",
            "description": "The first words.",
        }


PERMISSIVE = '''from typing import Dict, List, Literal
import typing
from pydantic import BaseModel, Field

LIMIT = 10


class Filter(BaseModel):
    field: str
    mode: Literal["all", "any"] = Field(default="all", description="How the terms combine.")


def search(
    query: str | None,
    kind: Literal["docs", "code"],
    weights: Dict[str, int],
    tags: typing.List[str],
    extra: List,
    filter: Filter,
    *,
    limit: int = LIMIT,
) -> str:
    """Search the index.

    Args:
        query: What to look for.
        kind: Where to look.
        weights: A weight per term.
        tags: Tags to match.
        extra: Extra terms.
        filter: How to filter.
        limit: How many results.
    """

    def shorten(text):
        return text[:10]

    return shorten(str(query))
'''


class TestWhereMemletReadsMoreThanLetta:
    """README compatibility note: Letta 0.16.8 refused (or garbled) these annotations and picked the nested helper
    as the tool; memlet derives the schema the signature describes."""

    def test_the_signature_is_read_as_python_reads_it(self, client: Letta) -> None:
        tool = client.tools.create(source_code=PERMISSIVE)
        assert tool.name == "search"
        string_list = {"type": "array", "items": {"type": "string"}}
        assert tool.json_schema == {
            "name": "search",
            "description": "Search the index.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to look for."},
                    "kind": {"type": "string", "enum": ["docs", "code"], "description": "Where to look."},
                    "weights": {
                        "type": "object",
                        "additionalProperties": {"type": "integer"},
                        "description": "A weight per term.",
                    },
                    "tags": {**string_list, "description": "Tags to match."},
                    "extra": {**string_list, "description": "Extra terms."},
                    "filter": {
                        "type": "object",
                        "properties": {
                            "field": {"type": "string"},
                            "mode": {"type": "string", "enum": ["all", "any"], "description": "How the terms combine."},
                        },
                        "required": ["field"],
                        "description": "How to filter.",
                    },
                    "limit": {"type": "integer", "description": "How many results."},
                },
                "required": ["kind", "weights", "tags", "extra", "filter"],
            },
        }


class TestStrictMode:
    """enable_strict_mode (the enable_strict_mode_* tests): what an agent with `strict` sends the model for a
    tool. Every parameter is required; an optional one also accepts null (a null `anyOf` member, or `null` for
    one without a type); nested objects are closed and require all their properties, which stay as typed."""

    def test_optional_parameters_take_null_and_nested_ones_stay_typed(self, client: Letta, mock_llm: MockLLM) -> None:
        parameters = {
            "type": "object",
            "properties": {
                "step": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}, "done": {"type": "boolean"}},
                    "required": ["title"],
                },
                "when": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "A date or a day."},
                "extra": {"description": "Anything else."},
            },
            "required": ["step"],
        }
        schema = {"name": "plan", "description": "Plan a step.", "parameters": parameters}
        tool = client.tools.create(source_code=SOURCE.replace("def act", "def plan"), json_schema=schema)
        agent = client.agents.create(name="strict-plan", model=MODEL, tool_ids=[tool.id])
        client.agents.update(agent.id, llm_config={**agent.llm_config.model_dump(), "strict": True})
        mock_llm.reset()
        mock_llm.script(Reply.text("ok"))
        client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])

        sent = next(t["function"] for t in mock_llm.requests[0]["tools"] if t["function"]["name"] == "plan")
        assert sent["strict"] is True
        assert sorted(sent["parameters"].pop("required")) == ["extra", "step", "when"]
        assert sorted(sent["parameters"]["properties"]["step"].pop("required")) == ["done", "title"]
        assert sent["parameters"] == {
            "type": "object",
            "properties": {
                "step": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}, "done": {"type": "boolean"}},
                    "additionalProperties": False,
                },
                "when": {
                    "anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}],
                    "description": "A date or a day.",
                },
                "extra": {"description": "Anything else.", "type": "null"},
            },
            "additionalProperties": False,
        }
