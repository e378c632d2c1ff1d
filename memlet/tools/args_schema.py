"""A custom tool's function schema built from its `args_json_schema`, the way Letta 0.16.8 builds it.

Letta does not copy the properties it is given. It turns the JSON schema into Python types (a Pydantic model per
`$defs` entry) and renders those types back, so what the model is shown is a reduced schema:

- each top-level property becomes its type's schema plus a `description` ("" when the property has none); `enum`,
  `default`, `title`, `format` and the like are dropped;
- `anyOf` with `null` and one other type is that type; an array keeps its `items`; an object is `{"type": "object"}`;
- a `$ref` to a `$defs` model becomes an inline object whose properties are `{type, description}` pairs;
- the description is the function's whole docstring, or "The <name> tool" when it has none.

What Letta cannot render (unions of several types, maps with typed values, a `$ref` it cannot resolve...) is a 400.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from memlet.errors import BadRequestError
from memlet.tools.json_schema import function_node

_SCALARS = frozenset({"string", "integer", "number", "boolean"})


@dataclass(frozen=True)
class _Type:
    """The Python type Letta reads a property as: scalar | list | dict | typed_dict | model | optional | union."""

    kind: str
    name: str = ""  # the JSON type of a scalar, the `$defs` name of a model
    inner: _Type | None = None


def schema_from_args(source_code: str, args_json_schema: dict[str, Any], name: str | None = None) -> dict[str, Any]:
    """The function schema of the tool in `source_code` whose parameters are `args_json_schema`."""
    func = function_node(source_code, name)
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


def _bad(reason: str) -> BadRequestError:
    return BadRequestError(f"Invalid args_json_schema: {reason}")


class _Reader:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, dict[str, Any]] = schema.get("$defs") or {}
        self.models: dict[str, dict[str, tuple[_Type, Any, bool]]] = {}
        # Letta builds every `$defs` model up front, last first: a model may refer only to those after it.
        for def_name, definition in reversed(list(self.defs.items())):
            self.models[def_name] = self.fields(definition, def_name)

    def fields(self, schema: Any, where: str) -> dict[str, tuple[_Type, Any, bool]]:
        properties = schema.get("properties") if isinstance(schema, dict) else None
        if not isinstance(properties, dict):
            raise _bad(f"{where} has no 'properties' object")
        required = schema.get("required") or []
        return {
            key: (self.read(prop), prop.get("description", "") if isinstance(prop, dict) else "", key in required)
            for key, prop in properties.items()
        }

    def read(self, prop: Any) -> _Type:
        if not isinstance(prop, dict):
            raise _bad(f"cannot convert {prop!r} to a type")
        kind = prop.get("type")
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
        raise _bad(f"cannot convert {prop} to a type")

    def _object(self, prop: dict[str, Any]) -> _Type:
        if "$ref" in prop:
            target = str(prop["$ref"]).rsplit("/", 1)[-1]
            return _Type("model", target) if target in self.models else _Type("dict")
        if "additionalProperties" not in prop or prop["additionalProperties"] is True:
            return _Type("dict")
        if prop["additionalProperties"] is False:
            raise _bad("additionalProperties=false is not supported")
        return _Type("typed_dict", inner=self.read(prop["additionalProperties"]))

    def _ref(self, ref: Any) -> _Type:
        target = str(ref).rsplit("/", 1)[-1]
        if target not in self.models:
            raise _bad(f"reference {target!r} not found in $defs")
        return _Type("model", target)

    def _any_of(self, options: list[Any]) -> _Type:
        nullable = any(isinstance(o, dict) and o.get("type") == "null" for o in options)
        types = [self.read(o) for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if not types:
            raise _bad("anyOf holds no type but null")
        if len(types) == 1:
            return _Type("optional", inner=types[0]) if nullable else types[0]
        return _Type("union")

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
            raise _bad("maps with typed values are not supported (use a $defs model)")
        raise _bad("unions of several types are not supported")

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
