"""Deriving a tool's OpenAI function schema from its Python source (POST /v1/tools/ with source_code)."""

import hashlib
import textwrap

import pytest

from memlet.errors import BadRequestError
from memlet.tools.json_schema import derive_json_schema, function_name, tool_hash


def _tool(body: str) -> str:
    return textwrap.dedent(body).strip()


def _params(source: str) -> dict:
    return derive_json_schema(_tool(source))["parameters"]


class TestFunctionChoice:
    MULTI = '''
        def helper_function(x: int) -> int:
            """
            Helper function that doubles the input

            Args:
                x: The input number
            """
            return x * 2

        def main_function(x: int, y: int) -> int:
            """
            Main function that uses the helper

            Args:
                x: First number
                y: Second number
            """
            return helper_function(x) + y
    '''

    def test_last_top_level_function_is_the_tool(self) -> None:
        schema = derive_json_schema(_tool(self.MULTI))
        assert schema["name"] == "main_function"
        assert schema["description"] == "Main function that uses the helper"
        assert schema["parameters"]["properties"]["x"] == {"type": "integer", "description": "First number"}
        assert schema["parameters"]["required"] == ["x", "y"]

    def test_function_name_matches_the_schema(self) -> None:
        assert function_name(_tool(self.MULTI)) == "main_function"

    def test_name_picks_a_named_function_and_renames_schema(self) -> None:
        assert derive_json_schema(_tool(self.MULTI), name="helper_function")["parameters"]["required"] == ["x"]
        assert derive_json_schema(_tool(self.MULTI), name="renamed")["name"] == "renamed"

    def test_nested_function_does_not_replace_the_outer_one(self) -> None:
        source = '''
            def outer(a: str) -> str:
                """Outer tool.

                Args:
                    a: Some text.
                """
                def inner(b: int) -> int:
                    """Inner."""
                    return b
                return a
        '''
        assert derive_json_schema(_tool(source))["name"] == "outer"

    def test_async_function_is_accepted(self) -> None:
        source = '''
            async def fetch(url: str) -> str:
                """Fetch a page.

                Args:
                    url: Address to fetch.
                """
        '''
        assert derive_json_schema(_tool(source))["parameters"]["required"] == ["url"]


class TestTypes:
    def test_primitive_types(self) -> None:
        props = _params('''
            def f(a: str, b: int, c: float, d: bool) -> str:
                """Do it.

                Args:
                    a: A.
                    b: B.
                    c: C.
                    d: D.
                """
        ''')["properties"]
        assert [props[k]["type"] for k in "abcd"] == ["string", "integer", "number", "boolean"]

    def test_lists(self) -> None:
        props = _params('''
            from typing import List
            def f(a: list[int], b: List[str], c: list, d: list[dict]) -> str:
                """Do it.

                Args:
                    a: A.
                    b: B.
                    c: C.
                    d: D.
                """
        ''')["properties"]
        assert props["a"] == {"type": "array", "items": {"type": "integer"}, "description": "A."}
        assert props["b"]["items"] == {"type": "string"}
        assert props["c"]["items"] == {"type": "string"}
        assert props["d"]["items"] == {"type": "object"}

    def test_dicts(self) -> None:
        props = _params('''
            from typing import Any
            def f(a: dict, b: dict[str, int], c: dict[str, Any]) -> str:
                """Do it.

                Args:
                    a: A.
                    b: B.
                    c: C.
                """
        ''')["properties"]
        assert props["a"] == {"type": "object", "description": "A."}
        assert props["b"] == {"type": "object", "additionalProperties": {"type": "integer"}, "description": "B."}
        assert props["c"] == {"type": "object", "description": "C."}

    def test_dict_with_non_string_keys_is_rejected(self) -> None:
        with pytest.raises(BadRequestError, match="Dictionary keys must be strings"):
            _params('''
                def f(a: dict[int, str]) -> str:
                    """Do it.

                    Args:
                        a: A.
                    """
            ''')

    def test_literal_becomes_enum(self) -> None:
        props = _params('''
            from typing import List, Literal, Optional
            def f(mode: Literal["fast", "slow"], roles: Optional[List[Literal["user", "tool"]]] = None) -> str:
                """Do it.

                Args:
                    mode: Mode.
                    roles: Roles.
                """
        ''')["properties"]
        assert props["mode"] == {"type": "string", "enum": ["fast", "slow"], "description": "Mode."}
        assert props["roles"]["items"] == {"type": "string", "enum": ["user", "tool"]}

    def test_quoted_annotation_is_parsed(self) -> None:
        props = _params('''
            def f(a: "list[int]") -> str:
                """Do it.

                Args:
                    a: A.
                """
        ''')["properties"]
        assert props["a"]["items"] == {"type": "integer"}

    def test_unknown_type_is_rejected(self) -> None:
        with pytest.raises(BadRequestError, match="Python type Widget has no corresponding JSON schema type"):
            _params('''
                def f(a: Widget) -> str:
                    """Do it.

                    Args:
                        a: A.
                    """
            ''')

    def test_general_union_is_rejected(self) -> None:
        with pytest.raises(BadRequestError, match="General Union types are not yet supported"):
            _params('''
                def f(a: int | str) -> str:
                    """Do it.

                    Args:
                        a: A.
                    """
            ''')

    def test_pydantic_model_in_source_becomes_object(self) -> None:
        props = _params('''
            from pydantic import BaseModel, Field

            class Step(BaseModel):
                name: str = Field(..., description="Name of the step.")
                weight: int = Field(1, description="How much it counts.")

            def plan(steps: list[Step]) -> str:
                """Make a plan.

                Args:
                    steps: The steps.
                """
        ''')["properties"]
        assert props["steps"] == {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "Name of the step."},
                    "weight": {"type": "integer", "description": "How much it counts."},
                },
                "required": ["name"],
            },
            "description": "The steps.",
        }


class TestRequired:
    def test_defaults_and_optionals_are_not_required(self) -> None:
        params = _params('''
            from typing import Optional, Union
            def f(a: str, g: Optional[str], h: Union[int, None], i: int | None,
                  b: int = 3, c: Optional[str] = None, e: str | None = None) -> str:
                """Do it.

                Args:
                    a: A.
                    b: B.
                    c: C.
                    e: E.
                    g: G.
                    h: H.
                    i: I.
                """
        ''')
        assert params["required"] == ["a"]
        assert params["properties"]["e"] == {"type": "string", "description": "E."}
        assert params["properties"]["h"] == {"type": "integer", "description": "H."}

    def test_defaults_are_not_copied_into_the_schema(self) -> None:
        assert (
            "default"
            not in _params('''
            def f(b: int = 3) -> str:
                """Do it.

                Args:
                    b: B.
                """
        ''')["properties"]["b"]
        )

    def test_keyword_only_arguments_count(self) -> None:
        params = _params('''
            def f(a: str, *, b: int, c: int = 1) -> str:
                """Do it.

                Args:
                    a: A.
                    b: B.
                    c: C.
                """
        ''')
        assert params["required"] == ["a", "b"]

    def test_injected_parameters_are_left_out(self) -> None:
        params = _params('''
            def f(self, agent_state: "AgentState", value: str) -> str:
                """Do it.

                Args:
                    value: The value.
                """
        ''')
        assert list(params["properties"]) == ["value"]
        assert params["required"] == ["value"]


class TestDocstring:
    def test_short_and_long_description_are_joined(self) -> None:
        schema = derive_json_schema(
            _tool('''
            def f() -> str:
                """Short line.

                Longer explanation
                over two lines.

                Returns:
                    str: Something.
                """
        ''')
        )
        assert schema["description"] == "Short line.\n\nLonger explanation\nover two lines."
        assert schema["parameters"] == {"type": "object", "properties": {}, "required": []}

    def test_examples_section_is_appended_with_source_indentation(self) -> None:
        schema = derive_json_schema(
            _tool('''
            def f(a: str) -> str:
                """Short line.

                Args:
                    a (str): The a.

                Examples:
                    f("x")

                Returns:
                    str: Something.
                """
        ''')
        )
        # Letta keeps the raw indentation and everything after "Examples:", Returns included.
        assert (
            schema["description"] == 'Short line.\n\nExamples:\n        f("x")\n\n    Returns:\n        str: Something.'
        )
        assert schema["parameters"]["properties"]["a"]["description"] == "The a."

    def test_multiline_argument_description(self) -> None:
        props = _params('''
            def f(a: str) -> str:
                """Do it.

                Args:
                    a: First line
                        and second line.
                """
        ''')["properties"]
        assert props["a"]["description"] == "First line\nand second line."


class TestErrors:
    def test_syntax_error_names_the_line(self) -> None:
        with pytest.raises(BadRequestError) as info:
            derive_json_schema("def f() -> str:\n    '''Doc.'''\n    return )\n")
        assert info.value.status_code == 400
        assert info.value.message.startswith(
            "Failed to derive json schema: Schema generation failed: Failed to parse source code: "
        )
        assert info.value.message.endswith("(<unknown>, line 3)")

    def test_missing_docstring(self) -> None:
        with pytest.raises(BadRequestError, match="Function f missing docstring"):
            derive_json_schema("def f(a: str) -> str:\n    return a\n")

    def test_undocumented_argument(self) -> None:
        with pytest.raises(BadRequestError, match="Parameter 'b' in function 'f' lacks a description in the docstring"):
            _params('''
                def f(a: str, b: str) -> str:
                    """Do it.

                    Args:
                        a: A.
                    """
            ''')

    def test_missing_annotation(self) -> None:
        with pytest.raises(BadRequestError, match="Type error in schema generation: Parameter 'a' in function 'f'"):
            _params('''
                def f(a) -> str:
                    """Do it.

                    Args:
                        a: A.
                    """
            ''')

    def test_no_function(self) -> None:
        with pytest.raises(BadRequestError, match="No functions found in source code"):
            derive_json_schema("x = 1\n")
        with pytest.raises(BadRequestError, match="No functions found in source code"):
            function_name("x = 1\n")


class TestToolHash:
    def test_is_letta_formula(self) -> None:
        assert tool_hash("def f(): pass", "python") == hashlib.sha256(b"def f(): pass|python|").hexdigest()[:12]

    def test_changes_with_requirements(self) -> None:
        plain = tool_hash("src", "python")
        with_pip = tool_hash("src", "python", [{"name": "requests", "version": None}])
        expected = "src|python|pip:[PipRequirement(name='requests', version=None)]"
        assert with_pip == hashlib.sha256(expected.encode()).hexdigest()[:12]
        assert with_pip != plain
