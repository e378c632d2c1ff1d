"""A custom tool's function schema built from its `args_json_schema`, the way Letta 0.16.8 builds it.

Letta does not copy the properties it is given. It turns the JSON schema into Python types (a Pydantic model per
`$defs` entry) and renders those types back, so what the model is shown is a reduced schema:

- each top-level property becomes its type's schema plus a `description` ("" when the property has none); `enum`,
  `default`, `title`, `format` and the like are dropped;
- `anyOf` with `null` and one other type is that type; an array keeps its `items`; an object is `{"type": "object"}`;
- a `$ref` to a `$defs` model becomes an inline object whose properties are `{type, description}` pairs;
- the description is the function's whole docstring, or "The <name> tool" when it has none.

What Letta cannot render (unions of several types, maps with typed values, a `$ref` it cannot resolve...) is a 400,
in Letta's words where Letta answered 400 too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from memlet.errors import BadRequestError
from memlet.tools.json_schema import find_function

_SCALARS = frozenset({"string", "integer", "number", "boolean"})
_PYTHON_NAMES = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}


@dataclass(frozen=True)
class _Type:
    """The Python type Letta reads a property as: scalar | list | dict | typed_dict | model | optional | union."""

    kind: str
    name: str = ""  # the JSON type of a scalar, the `$defs` name of a model
    inner: _Type | None = None
    members: tuple[_Type, ...] = ()  # a union's types

    def python(self) -> str:
        """How Letta's error messages print the Python type."""
        if self.kind == "scalar":
            return _PYTHON_NAMES[self.name]
        if self.kind == "model":
            return f"letta.functions.helpers.{self.name}"
        if self.kind == "dict":
            return "dict"
        if self.kind == "union":
            return f"typing.Union[{', '.join(member.python() for member in self.members)}]"
        wrapper = {"list": "typing.List[{}]", "typed_dict": "typing.Dict[str, {}]", "optional": "typing.Optional[{}]"}
        return wrapper[self.kind].format(self.inner.python() if self.inner else "")


def schema_from_args(source_code: str, args_json_schema: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    """The function schema of the tool in `source_code` whose parameters are `args_json_schema`."""
    func = _function(source_code, name)
    fn_name = name or func.name
    reader = _Reader(args_json_schema)
    fields = reader.fields(args_json_schema, "args_json_schema")
    properties = {key: {**reader.top(kind), "description": desc} for key, (kind, desc, _) in fields.items()}
    return {
        "name": fn_name,
        "description": ast.get_docstring(func) or f"The {fn_name} tool",
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": [key for key, (_, _, required) in fields.items() if required],
        },
    }


def _function(source_code: str, name: str | None) -> ast.FunctionDef | ast.AsyncFunctionDef:
    reason = "No function definition found in source code"
    try:
        func = find_function(ast.parse(source_code), name)
    except (SyntaxError, ValueError) as exc:  # ValueError: a null byte in the source
        func, reason = None, str(exc)
    if func is None:
        raise BadRequestError(f"Failed to parse function name and docstring: {reason}")
    return func


def _bad(reason: str) -> BadRequestError:
    return BadRequestError(f"Invalid args_json_schema: {reason}")


def _unconvertible(prop: Any) -> BadRequestError:
    return BadRequestError(f"Unable to convert pydantic field schema to type: {prop}")


class _Reader:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, dict[str, Any]] = schema.get("$defs") or {}
        if not isinstance(self.defs, dict):
            raise _bad("'$defs' is not an object")
        self.models: dict[str, dict[str, tuple[_Type, Any, bool]]] = {}
        # Letta builds every `$defs` model up front, last first: a model may refer only to those after it.
        for def_name, definition in reversed(list(self.defs.items())):
            self.models[def_name] = self.fields(definition, def_name)

    def fields(self, schema: Any, where: str) -> dict[str, tuple[_Type, Any, bool]]:
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict):
            raise _bad(f"{where} has no 'properties' object")
        required = schema.get("required") or []
        if not isinstance(required, list):
            raise _bad(f"{where}'s 'required' is not a list")
        return {
            key: (self.read(prop), prop.get("description", "") if isinstance(prop, dict) else "", key in required)
            for key, prop in properties.items()
        }

    def read(self, prop: Any) -> _Type:
        if not isinstance(prop, dict):
            raise _unconvertible(prop)
        kind = prop.get("type")
        if not isinstance(kind, str | None):  # `["string", "null"]` and the like: Letta reads only one type name
            raise _unconvertible(prop)
        if kind in _SCALARS:
            return _Type("scalar", kind)
        if kind == "array":
            if "items" not in prop:
                raise _bad(f"array without 'items': {prop}")
            return _Type("list", inner=self.read(prop["items"]))
        if kind == "object":
            return self._object(prop)
        if "$ref" in prop:
            return self._ref(prop["$ref"])
        if isinstance(prop.get("anyOf"), list):
            return self._any_of(prop["anyOf"])
        raise _unconvertible(prop)

    def _object(self, prop: dict[str, Any]) -> _Type:
        if "$ref" in prop:
            target = str(prop["$ref"]).rsplit("/", 1)[-1]
            return _Type("model", target) if target in self.models else _Type("dict")
        if "additionalProperties" not in prop or prop["additionalProperties"] is True:
            return _Type("dict")
        if prop["additionalProperties"] is False:
            raise BadRequestError("additionalProperties=false is not supported.")
        return _Type("typed_dict", inner=self.read(prop["additionalProperties"]))

    def _ref(self, ref: Any) -> _Type:
        target = str(ref).rsplit("/", 1)[-1]
        if target not in self.models:
            raise BadRequestError(f"Reference {target} not found in nested models")
        return _Type("model", target)

    def _any_of(self, options: list[Any]) -> _Type:
        nullable = any(isinstance(o, dict) and o.get("type") == "null" for o in options)
        types = [self.read(o) for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if not types:
            raise _bad("anyOf holds no type but null")
        if len(types) == 1:
            return _Type("optional", inner=types[0]) if nullable else types[0]
        return _Type("union", members=tuple(types))

    # --- rendering: a top-level parameter (Letta's type_to_json_schema_type) ---

    def top(self, t: _Type) -> dict[str, Any]:
        if t.kind == "scalar":
            return {"type": t.name}
        if t.kind == "list" and t.inner is not None:
            return {"type": "array", "items": self.top(t.inner)}
        if t.kind == "dict":
            return {"type": "object"}
        if t.kind == "model":
            return self.model(t.name)
        if t.kind == "optional" and t.inner is not None:
            return self.top(t.inner)
        if t.kind == "typed_dict":
            raise BadRequestError(
                f"Dictionary types {t.python()} with nested type arguments are not supported "
                "(consider using a Pydantic model instead)"
            )
        raise BadRequestError("General Union types are not yet supported")

    # --- rendering: a model's fields (Letta's pydantic_model_to_json_schema) ---

    def model(self, name: str) -> dict[str, Any]:
        fields = self.models[name]
        return {
            "type": "object",
            "properties": {key: self._member(kind, desc) for key, (kind, desc, _) in fields.items()},
            "required": [key for key, (_, _, required) in fields.items() if required],
        }

    def _member(self, t: _Type, desc: Any) -> dict[str, Any]:
        if t.kind == "list" and t.inner is not None:
            return {"type": "array", "items": self._items(t.inner), "description": desc}
        if t.kind == "model":
            return {**self.model(t.name), "description": desc}
        inner = t.inner if t.kind == "optional" and t.inner is not None else t
        if inner.kind == "scalar":
            return {"type": inner.name, "description": desc}
        if inner.kind == "list":
            return {"type": "array", "description": desc}
        if inner.kind in ("dict", "typed_dict"):
            return {"type": "object", "description": desc}
        raise _bad("a $defs model field that is an optional model or a union is not supported")

    def _items(self, t: _Type) -> dict[str, Any]:
        if t.kind == "model":
            return self.model(t.name)
        if t.kind == "list" and t.inner is not None:
            return {"type": "array", "items": self._items(t.inner), "description": ""}
        raise _bad("a list inside a $defs model must hold models or lists")
