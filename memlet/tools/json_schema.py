"""OpenAI function JSON schema from a tool's Python source, the way Letta derives it for `POST /v1/tools/`.

The source is only parsed (`ast`), never executed. The tool is the last top-level function. Its description and
per-argument descriptions come from the docstring, its types from the annotations:

    str/int/float/bool          -> string/integer/number/boolean
    list, list[X], List[X]      -> array (bare list: items are strings)
    dict, dict[str, X]          -> object (typed values become additionalProperties)
    Literal["a", "b"]           -> enum
    Optional[X], X | None       -> X, and the argument is not required
    a BaseModel class in source -> object with its fields as properties

Arguments without a default are required, except Optional ones (as in Letta). `self` and `agent_state` are injected
by the server and left out. Failures raise BadRequestError with Letta's error texts, so clients see the same 400.
"""

import ast
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from docstring_parser import parse as parse_docstring

from memlet.errors import BadRequestError

# Parameters the server passes in itself; they never appear in the schema.
RESERVED_PARAMETERS = frozenset({"self", "agent_state"})

_PRIMITIVES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}
_LIST_NAMES = frozenset({"list", "List", "Sequence"})
_DICT_NAMES = frozenset({"dict", "Dict", "Mapping"})
_TOOL_HASH_LENGTH = 12


class _TypeProblem(TypeError):
    """An annotation is missing; Letta reports it as a type error."""


class _ValueProblem(ValueError):
    """An annotation or docstring cannot be turned into a schema."""


class _RecursiveModel(RecursionError):
    """A model refers to itself, directly or through others: its schema would never end."""


# Letta's unknown-type error lists the Python types it maps, printed as Python prints that dict.
_TYPE_MAP_TEXT = (
    "{<class 'int'>: 'integer', <class 'str'>: 'string', <class 'bool'>: 'boolean', <class 'float'>: 'number', "
    "None: 'null'}"
)


@dataclass
class _Model:
    """A pydantic model declared in the tool source, read from its class body (its docstring is not: Letta rebuilds
    the model from its fields alone, so a list of models shows no model description)."""

    fields: list[tuple[str, ast.expr, bool, str | None]] = field(default_factory=list)  # name, type, required, doc
    rendering: bool = False  # its schema is being built (seeing it again inside means it refers to itself)


def derive_json_schema(source_code: str, name: str | None = None) -> dict[str, Any]:
    """The OpenAI function schema (`name`, `description`, `parameters`) of the tool defined in `source_code`.

    `name` overrides the schema's name; when it names a top-level function, that function is the tool.
    """
    tree = _parse(source_code)
    func = _pick_function(tree, name)
    try:
        return _schema_for_function(func, _collect_models(tree), name)
    except _TypeProblem as exc:
        raise _failure(f"Type error in schema generation: {exc}") from exc
    except _ValueProblem as exc:
        raise _failure(f"Value error in schema generation: {exc}") from exc
    except RecursionError as exc:  # Letta's words for the same failure, a 400 there too
        raise _failure("Unexpected error in schema generation: maximum recursion depth exceeded") from exc


def function_name(source_code: str) -> str:
    """The name of the function that `derive_json_schema` would turn into the tool."""
    return _pick_function(_parse(source_code), None).name


def tool_hash(
    source_code: str | None,
    source_type: str | None,
    pip_requirements: Iterable[Mapping[str, Any]] | None = None,
    npm_requirements: Iterable[Mapping[str, Any]] | None = None,
) -> str:
    """Letta's `metadata_.tool_hash`: 12 hex chars that change with the source, its language or its packages."""
    parts = []
    if pip_requirements:
        parts.append(f"pip:{_requirements_repr('PipRequirement', pip_requirements)}")
    if npm_requirements:
        parts.append(f"npm:{_requirements_repr('NpmRequirement', npm_requirements)}")
    combined = "|".join([source_code or "", source_type or "", ";".join(parts)])
    return hashlib.sha256(combined.encode()).hexdigest()[:_TOOL_HASH_LENGTH]


def _requirements_repr(kind: str, requirements: Iterable[Mapping[str, Any]]) -> str:
    # Letta hashes str() of a list of pydantic models, i.e. their reprs; rebuild that text from plain dicts.
    items = [f"{kind}(name={req.get('name')!r}, version={req.get('version')!r})" for req in requirements]
    return f"[{', '.join(items)}]"


def _failure(reason: str) -> BadRequestError:
    return BadRequestError(f"Failed to derive json schema: Schema generation failed: {reason}")


def _parse(source_code: str) -> ast.Module:
    try:
        return ast.parse(source_code)
    except SyntaxError as exc:  # str(exc) ends with "(<unknown>, line N)", which users need to find the error
        raise _failure(f"Failed to parse source code: {exc}") from exc


def find_function(tree: ast.Module, name: str | None) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The tool's function in a parsed source: the last top-level one (or the one called `name`), else None."""
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    if not functions:
        # Letta also accepts a function nested in a class or block; take the last one it would find.
        functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
    named = [func for func in functions if func.name == name]
    return named[-1] if named else (functions[-1] if functions else None)


def _pick_function(tree: ast.Module, name: str | None) -> ast.FunctionDef | ast.AsyncFunctionDef:
    func = find_function(tree, name)
    if func is None:
        raise _failure("No functions found in source code")
    return func


def _schema_for_function(
    func: ast.FunctionDef | ast.AsyncFunctionDef, models: dict[str, _Model], name: str | None
) -> dict[str, Any]:
    raw_doc = _raw_docstring(func.body)
    if not raw_doc:
        raise _failure(f"Function {func.name} missing docstring")
    try:
        doc = parse_docstring(raw_doc)
    except Exception as exc:  # docstring_parser's ParseError; Letta's 400 words for any other failure
        raise _failure(f"Unexpected error in schema generation: {exc}") from exc
    arg_docs: dict[str, str | None] = {}
    for param in doc.params:  # an argument documented twice keeps its first description, as in Letta
        arg_docs.setdefault(param.arg_name, param.description)

    properties: dict[str, Any] = {}
    required: list[str] = []
    for arg, has_default in _arguments(func.args):
        if arg.arg in RESERVED_PARAMETERS:
            continue
        if arg.annotation is None:
            raise _TypeProblem(f"Parameter '{arg.arg}' in function '{func.name}' lacks a type annotation")
        description = arg_docs.get(arg.arg)
        if not description:
            raise _ValueProblem(f"Parameter '{arg.arg}' in function '{func.name}' lacks a description in the docstring")
        inner, optional = _unwrap_optional(arg.annotation)
        properties[arg.arg] = {**_type_schema(inner, models), "description": description}
        if not has_default and not optional:
            required.append(arg.arg)

    return {
        "name": name or func.name,
        "description": _description(raw_doc, doc.short_description, doc.long_description),
        "parameters": {"type": "object", "properties": properties, "required": required},
    }


def _raw_docstring(body: list[ast.stmt]) -> str | None:
    # The uncleaned text, as Letta reads it: its Examples section keeps the source indentation.
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first.value.value
    return None


def _arguments(args: ast.arguments) -> list[tuple[ast.arg, bool]]:
    """Positional and keyword-only arguments with whether each has a default (`*args`/`**kwargs` are skipped)."""
    positional = args.posonlyargs + args.args
    first_default = len(positional) - len(args.defaults)
    result = [(arg, index >= first_default) for index, arg in enumerate(positional)]
    result += [(arg, default is not None) for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True)]
    return result


def _description(raw_doc: str, short: str | None, long: str | None) -> str:
    if short and long:
        text = f"{short}\n\n{long}"
    else:
        text = short or long or "No description available"
    examples = _examples_section(raw_doc)
    if examples and "Examples:" not in text:
        text = f"{text}\n\n{examples}"
    return text


def _examples_section(raw_doc: str) -> str | None:
    """The `Examples:` section up to the next unindented `Heading:` line, as Letta appends it."""
    if "Examples:" not in raw_doc:
        return None
    collected: list[str] = []
    for line in raw_doc.strip().splitlines():
        stripped = line.strip()
        if not collected:
            if stripped.startswith("Examples:"):
                collected.append(line)
            continue
        if stripped and not line.startswith(" ") and stripped.endswith(":"):
            break
        collected.append(line)
    return "\n".join(collected).strip() or None


def _unwrap_optional(node: ast.expr) -> tuple[ast.expr, bool]:
    """`Optional[X]`, `Union[X, None]` and `X | None` become `(X, True)`; anything else `(node, False)`."""
    node = _resolve_string(node)
    members = _union_members(node)
    if members is None:
        return node, False
    non_null = [member for member in members if not _is_none(member)]
    if len(non_null) == len(members):
        raise _ValueProblem(f"General Union types are not yet supported: {ast.unparse(node)}")
    if len(non_null) != 1:
        raise _ValueProblem(f"Optional type must have exactly one type argument, but got {ast.unparse(node)}")
    return _resolve_string(non_null[0]), True


def _union_members(node: ast.expr) -> list[ast.expr] | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return (_union_members(node.left) or [node.left]) + (_union_members(node.right) or [node.right])
    if isinstance(node, ast.Subscript):
        base = _simple_name(node.value)
        if base == "Optional":
            return [node.slice, ast.Constant(value=None)]
        if base == "Union":
            return list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    return None


def _type_schema(node: ast.expr, models: dict[str, _Model]) -> dict[str, Any]:
    node = _resolve_string(node)
    if _union_members(node) is not None:
        inner, _ = _unwrap_optional(node)
        return _type_schema(inner, models)
    if isinstance(node, ast.Subscript):
        return _generic_schema(node, models)
    name = _simple_name(node)
    if name in _PRIMITIVES:
        return {"type": _PRIMITIVES[name]}
    if name in _LIST_NAMES:
        return {"type": "array", "items": {"type": "string"}}
    if name in _DICT_NAMES:
        return {"type": "object"}
    if name in models:
        return _model_schema(models[name], models)
    if _is_none(node):
        return {"type": "null"}
    raise _ValueProblem(_no_json_type(node))


def _generic_schema(node: ast.Subscript, models: dict[str, _Model]) -> dict[str, Any]:
    base = _simple_name(node.value)
    args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if base in _LIST_NAMES and len(args) == 1:
        return {"type": "array", "items": _type_schema(args[0], models)}
    if base == "Literal":
        return _literal_schema(args)
    if base == "Annotated":
        return _type_schema(args[0], models)
    if base in _DICT_NAMES and len(args) == 2:
        if _simple_name(_resolve_string(args[0])) != "str":
            raise _ValueProblem(f"Dictionary keys must be strings, got {ast.unparse(node)}")
        value = _resolve_string(args[1])
        if _simple_name(value) in {"Any", "object"}:
            return {"type": "object"}
        return {"type": "object", "additionalProperties": _type_schema(value, models)}
    raise _ValueProblem(_no_json_type(node))


def _no_json_type(node: ast.expr) -> str:
    return f"Python type {ast.unparse(node)} has no corresponding JSON schema type - full map: {_TYPE_MAP_TEXT}"


def _literal_schema(args: list[ast.expr]) -> dict[str, Any]:
    values = []
    for arg in args:
        if not isinstance(arg, ast.Constant):
            raise _ValueProblem(f"Literal values must be constants, got {ast.unparse(arg)}")
        values.append(arg.value)
    kinds = {type(value) for value in values}
    if kinds == {bool}:
        return {"type": "boolean", "enum": values}
    if kinds == {int}:
        return {"type": "integer", "enum": values}
    if kinds <= {int, float}:
        return {"type": "number", "enum": values}
    return {"type": "string", "enum": values}


def _model_schema(model: _Model, models: dict[str, _Model]) -> dict[str, Any]:
    if model.rendering:
        raise _RecursiveModel
    model.rendering = True
    try:
        return _model_body(model, models)
    finally:
        model.rendering = False


def _model_body(model: _Model, models: dict[str, _Model]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, annotation, is_required, doc in model.fields:
        inner, _ = _unwrap_optional(annotation)
        prop = _type_schema(inner, models)
        properties[name] = {**prop, "description": doc} if doc else prop
        if is_required:
            required.append(name)
    return {"type": "object", "properties": properties, "required": required}


def _collect_models(tree: ast.Module) -> dict[str, _Model]:
    """Top-level `class X(BaseModel)` definitions: field types, whether required, `Field(description=...)`."""
    models: dict[str, _Model] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or not any(_simple_name(b) == "BaseModel" for b in node.bases):
            continue
        model = _Model()
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                required, doc = _field_info(stmt.value)
                model.fields.append((stmt.target.id, stmt.annotation, required, doc))
        models[node.name] = model
    return models


def _field_info(value: ast.expr | None) -> tuple[bool, str | None]:
    """Whether a model field is required, and its description, from its assigned value."""
    if value is None:
        return True, None
    if not (isinstance(value, ast.Call) and _simple_name(value.func) == "Field"):
        return False, None
    keywords = {kw.arg: kw.value for kw in value.keywords if kw.arg}
    description = keywords.get("description")
    doc = description.value if isinstance(description, ast.Constant) and isinstance(description.value, str) else None
    if "default" in keywords or "default_factory" in keywords:
        return False, doc
    if value.args:
        first = value.args[0]
        return isinstance(first, ast.Constant) and first.value is Ellipsis, doc
    return True, doc


def _resolve_string(node: ast.expr) -> ast.expr:
    """A quoted annotation (`"list[str]"`) is parsed into the expression it names."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return ast.parse(node.value, mode="eval").body
        except SyntaxError as exc:
            raise _ValueProblem(f"Cannot parse type annotation {node.value!r}") from exc
    return node


def _simple_name(node: ast.expr) -> str | None:
    """`List` for both `List` and `typing.List`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_none(node: ast.expr) -> bool:
    return (isinstance(node, ast.Constant) and node.value is None) or _simple_name(node) == "NoneType"
