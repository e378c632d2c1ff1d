"""Child side of the user-tool sandbox: run one tool call and report on a private file descriptor.

Started by `memlet.tool_exec.sandbox` as `python -I _sandbox_runner.py <result_fd>`. It must stay importable
without memlet (isolated mode, stdlib only), because it runs outside the server's import path.

Protocol:
- stdin: one JSON object {"source_code", "function_name", "args", "limits", "uid", "return_char_limit",
  "agent_state", "agent_id"}. A tool with an `agent_state` parameter gets an `AgentState` built from "agent_state"
  (its memory blocks, changeable through `agent_state.memory`); the block values after the call come back as
  "memory". A tool with an `agent_id` parameter the arguments leave out gets the calling agent's id, and every tool
  finds a global `client`, as in Letta.
  Arguments travel as data and become keyword arguments; they are never spliced into code. `limits` become
  rlimits before any tool code runs; a `uid` (given to a runner started as root) is switched to for good, with
  no supplementary groups and no capabilities left.
- stdout / stderr: left to the tool, so prints and subprocess output are captured by the parent verbatim.
- <result_fd>: one JSON object, written once at the end. Tools do not write there by accident, which keeps the
  result intact however much they print.
"""

import __future__

import builtins
import functools
import json
import linecache
import operator
import os
import resource
import sys
import traceback
import types
import warnings
from typing import Any, get_origin

TOOL_FILENAME = "<tool_source>"
# The raw value is only a convenience for the caller; past this size the text form is enough.
MAX_RAW_VALUE_CHARS = 1_000_000


def _set_limits(limits: dict[str, Any]) -> None:
    """Cap memory, processes, file size and CPU time (soft = hard, so the tool cannot raise them); no core dumps."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    memory_mb = int(limits.get("memory_mb") or 0)
    if memory_mb > 0:
        _cap(resource.RLIMIT_AS, memory_mb * 1024 * 1024)
    if limits.get("fsize_mb"):
        _cap(resource.RLIMIT_FSIZE, int(limits["fsize_mb"]) * 1024 * 1024)
    if limits.get("cpu_s"):
        # SIGXCPU at the soft limit ends a CPU-bound tool even if the parent's wall clock were to fail.
        _cap(resource.RLIMIT_CPU, int(limits["cpu_s"]))
    if limits.get("nproc"):
        _cap(resource.RLIMIT_NPROC, int(limits["nproc"]))


def _cap(which: int, value: int) -> None:
    _soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def _drop_privileges(uid: int | None) -> None:
    """Become `uid` (also as gid, no groups) for good; setuid from root clears every capability."""
    if uid is None or os.geteuid() != 0:
        return
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if os.getresuid() != (uid, uid, uid) or os.getgroups():
        raise SystemExit("sandbox: could not drop privileges")


def _letta_client() -> Any:
    """Letta's `client` global: a letta-client `Letta` when the tool's environment holds LETTA_API_KEY (its
    LETTA_BASE_URL, if any, picks the server) and the package is installed, else None."""
    if not os.environ.get("LETTA_API_KEY"):
        return None
    try:
        from letta_client import Letta
    except ImportError:
        return None
    return Letta(api_key=os.environ["LETTA_API_KEY"])


def _load_function(source_code: str, function_name: str, schema_names: dict[str, Any] | None = None) -> Any:
    """Execute the tool source in a fresh module and return the named function. `schema_names` (the models of an
    `args_json_schema`, `_schema_models`) are defined before the source runs, whose annotations then stay lazy."""
    # Letta's generated script starts with `from typing import *`, so tools may use List/Optional unimported.
    module = types.ModuleType("sandbox_tool")
    module.__dict__["__builtins__"] = builtins
    exec("from typing import *", module.__dict__)
    module.__dict__["client"] = _letta_client()
    module.__dict__.update(schema_names or {})
    flags = __future__.annotations.compiler_flag if schema_names else 0
    # A real module entry lets dataclasses and pydantic models defined in the tool resolve their module.
    sys.modules[module.__name__] = module
    # Registering the source makes tracebacks show the tool's lines.
    lines = source_code.splitlines(keepends=True)
    linecache.cache[TOOL_FILENAME] = (len(source_code), None, lines, TOOL_FILENAME)
    exec(compile(source_code, TOOL_FILENAME, "exec", flags=flags), module.__dict__)
    function = module.__dict__.get(function_name)
    if not callable(function):
        # Same outcome as Letta, whose generated script calls the name directly.
        raise NameError(f"name '{function_name}' is not defined")
    return function


class Block:
    """A memory block as a tool sees it through `agent_state.memory` (the fields Letta's Block has)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.id = data.get("id")
        self.label = str(data.get("label") or "")
        self.value = str(data.get("value") or "")
        self.limit = data.get("limit")
        self.description = data.get("description")
        self.read_only = bool(data.get("read_only"))
        self.metadata = data.get("metadata") or {}


class Memory:
    """The agent's core memory: look blocks up by label and change their values (saved after the call)."""

    def __init__(self, blocks: list[dict[str, Any]]) -> None:
        self.blocks = [Block(b) for b in blocks]

    def get_blocks(self) -> list[Block]:
        return list(self.blocks)

    def list_block_labels(self) -> list[str]:
        return [b.label for b in self.blocks]

    def get_block(self, label: str) -> Block:
        for block in self.blocks:
            if block.label == label:
                return block
        raise KeyError(
            f"Block field {label} does not exist (available sections = {', '.join(self.list_block_labels())})"
        )

    def update_block_value(self, label: str, value: str) -> None:
        if not isinstance(value, str):
            raise ValueError("Provided value must be a string")
        self.get_block(label).value = value


class AgentState:
    """The calling agent, for tools with an `agent_state` parameter (a small stand-in for Letta's AgentState)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.id = data.get("id")
        self.name = data.get("name")
        self.agent_type = data.get("agent_type")
        self.description = data.get("description")
        self.metadata = data.get("metadata") or {}
        self.tags = list(data.get("tags") or [])
        self.timezone = data.get("timezone")
        self.memory = Memory(list(data.get("blocks") or []))


def _schema_models(schema: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """The pydantic models Letta's sandbox builds from a tool's `args_json_schema`: one per `$defs` entry and one
    for the schema itself, named by its title. A model is built when first referred to (the stored schema's key
    order is not the order it was sent in). Returns the names a tool's source sees (the models, and `BaseModel` and
    `Field`, which Letta's generated code imports) and the schema's own model."""
    from pydantic import BaseModel, Field, create_model

    found = schema.get("$defs")
    definitions: dict[str, Any] = found if isinstance(found, dict) else {}
    models: dict[str, Any] = {}

    def kind(field: Any) -> Any:
        if not isinstance(field, dict):
            return Any
        if "$ref" in field:
            target = str(field["$ref"]).rsplit("/", 1)[-1]
            if target not in models and target in definitions:
                models[target] = Any  # a model that refers to itself sees Any
                models[target] = model(target, definitions[target])
            return models.get(target, Any)
        if isinstance(field.get("anyOf"), list):
            options = [kind(o) for o in field["anyOf"] if not (isinstance(o, dict) and o.get("type") == "null")]
            if not options:
                return Any
            union = functools.reduce(operator.or_, options)
            return union | None if len(options) < len(field["anyOf"]) else union
        simple = {"string": str, "integer": int, "number": float, "boolean": bool}.get(str(field.get("type")))
        if simple is not None:
            return simple
        if field.get("type") == "array":
            return list[kind(field.get("items"))]  # type: ignore[misc]
        if field.get("type") == "object":
            extra = field.get("additionalProperties")
            return dict[str, kind(extra)] if isinstance(extra, dict) else dict  # type: ignore[misc]
        return Any

    def model(name: str, definition: Any) -> Any:
        properties = definition.get("properties") if isinstance(definition, dict) else None
        required = definition.get("required") or [] if isinstance(definition, dict) else []
        fields: dict[str, Any] = {}
        for key, field in (properties if isinstance(properties, dict) else {}).items():
            described = field.get("description", "") if isinstance(field, dict) else ""
            default = ... if key in required else (field.get("default") if isinstance(field, dict) else None)
            fields[key] = (kind(field), Field(default, description=described))
        return create_model(name, **fields)

    for name in definitions:
        kind({"$ref": f"#/$defs/{name}"})
    title = str(schema.get("title") or "Model")
    top = model(title, schema)
    return {**models, title: top, "BaseModel": BaseModel, "Field": Field}, top


def _schema_args(top: Any, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments as Letta's sandbox hands them to a tool with an `args_json_schema`: validated into the
    schema's model (nested objects become model instances), then each read back from it."""
    instance = top(**args)
    return {name: getattr(instance, name) for name in args}


def _parameters(function: Any) -> set[str]:
    """The names `function` takes. A plain function's come from its code object; anything else (a decorated
    function, a callable object) goes through `inspect`, imported only then: with asyncio, which only a coroutine
    tool needs, it was most of a call's start-up (~60 ms of CPU)."""
    code = getattr(function, "__code__", None)
    if isinstance(function, types.FunctionType) and code is not None and not hasattr(function, "__wrapped__"):
        return set(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])
    import inspect

    try:
        return set(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return set()


def _awaitable(value: Any) -> bool:
    if hasattr(type(value), "__await__"):  # a coroutine, or any awaitable object
        return True
    if isinstance(value, types.GeneratorType):  # a generator-based coroutine (types.coroutine) is awaitable too
        import inspect

        return inspect.isawaitable(value)
    return False


def _annotation(function: Any, name: str) -> Any:
    """The parameter's annotation as a type (a string one is evaluated in the tool's own globals); None if none."""
    annotation = getattr(function, "__annotations__", {}).get(name)
    if isinstance(annotation, str):
        annotation = eval(annotation, getattr(function, "__globals__", {}))  # the tool's own code, in its sandbox
    return annotation


def _coerced(function: Any, args: dict[str, Any]) -> dict[str, Any]:
    """The arguments converted to the tool's annotated types, as Letta's sandbox does: text holding JSON (or a
    Python literal) is parsed first, then `int`, `float`, `bool`, `list`, `dict`... apply. All or nothing: if any
    argument cannot be converted, every argument is passed as the model sent it. Unlike Letta, text for a `str`
    parameter is left as sent (Letta parsed it and took `str()` of the result, turning JSON text into Python text);
    any other value sent for one becomes its `str()`, as in Letta.
    """
    converted = dict(args)
    try:
        for name, value in args.items():
            kind = _annotation(function, name)
            if kind is str and not isinstance(value, str):
                converted[name] = str(value)
                continue
            if kind is None or kind is str or kind is Any:
                continue
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except ValueError:
                    import ast

                    value = ast.literal_eval(value)
            origin = get_origin(kind)
            converted[name] = origin(value) if origin in (list, dict, tuple, set) else kind(value)
    except Exception:
        return dict(args)
    return converted


def _call(function: Any, args: dict[str, Any], agent_state: AgentState | None, agent_id: str | None) -> Any:
    """Call the tool with keyword arguments (converted to its annotated types, `_coerced`), plus `agent_state`
    when it takes one (None if none was sent) and the calling agent's id for an `agent_id` the arguments lack."""
    kwargs = _coerced(function, args)
    parameters = _parameters(function)
    if "agent_state" in parameters:
        kwargs["agent_state"] = agent_state
    if "agent_id" in parameters and "agent_id" not in kwargs:
        kwargs["agent_id"] = agent_id
    result = function(**kwargs)
    if _awaitable(result):
        import asyncio

        result = asyncio.run(_await(result))
    return result


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _dumped(value: Any) -> Any:
    """The return as Letta's sandbox hands it over: pydantic's Python-mode dump of an `Any` value (models and
    dataclasses become dicts; datetimes, sets and other objects stay as they are until `str()` turns them into
    text). pydantic comes from the server's own interpreter; without it the value goes on as its text."""
    try:
        from pydantic import TypeAdapter
    except ImportError:
        return str(value)
    try:
        return TypeAdapter(Any).dump_python(value)
    except Exception:
        return str(value)


def _to_json_value(value: Any) -> Any:
    """Round-trip the return through JSON the way Letta's sandbox transport does (anything JSON cannot hold is
    its `str()`). Plain data skips pydantic, whose import would slow down every call."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError, RecursionError):
        pass
    try:
        return json.loads(json.dumps(_dumped(value), default=str))
    except (TypeError, ValueError, RecursionError):
        return str(value)


def _return_text(value: Any, return_char_limit: int) -> str:
    """The model-visible text of a return value: Letta's coercion rules and truncation notice."""
    if isinstance(value, str):
        text = value
    elif value is None:
        text = "None"
    elif isinstance(value, dict):
        text = json.dumps(value, indent=2, ensure_ascii=False)
    else:
        text = str(value)
    if return_char_limit and len(text) > return_char_limit:
        text = (
            f"{text[:return_char_limit]}... [NOTE: function output was truncated since it exceeded the "
            f"character limit ({len(text)} > {return_char_limit})]"
        )
    return text


def _success_report(result: Any, return_char_limit: int) -> dict[str, Any]:
    value = _to_json_value(result)
    raw_size = len(json.dumps(value, ensure_ascii=False))
    return {
        "ok": True,
        "text": _return_text(value, return_char_limit),
        "value": value if raw_size <= MAX_RAW_VALUE_CHARS else None,
    }


def _error_report(exc: BaseException) -> dict[str, Any]:
    # Print the traceback from the tool's own frames on; the runner's frames are noise to the tool author.
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next
    traceback.print_exception(type(exc), exc, tb, file=sys.stderr)
    message = exc.msg if isinstance(exc, SyntaxError) and exc.msg else str(exc)
    return {"ok": False, "exc_type": type(exc).__name__, "exc_message": message}


def main() -> None:
    result_fd = int(sys.argv[1])
    runner_pid = os.getpid()
    payload = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding="utf-8", errors="backslashreplace")  # type: ignore[union-attr]
    _set_limits(payload.get("limits") or {})
    _drop_privileges(payload.get("uid"))
    # Letta runs tools with PYTHONWARNINGS=ignore, so a tool's warnings never reach its stderr (`-I` ignores the
    # variable here; the environment still carries it for Python processes the tool starts).
    warnings.simplefilter("ignore")
    state = AgentState(payload["agent_state"]) if payload.get("agent_state") else None
    try:
        schema = payload.get("args_json_schema")
        names, top = _schema_models(schema) if isinstance(schema, dict) and schema else (None, None)
        function = _load_function(payload["source_code"], payload["function_name"], names)
        args = _schema_args(top, payload["args"]) if top is not None else payload["args"]
        result = _call(function, args, state, payload.get("agent_id"))
        report = _success_report(result, int(payload.get("return_char_limit") or 0))
        if state is not None:
            # The block values after the call; the server saves those that changed.
            report["memory"] = {b.label: b.value for b in state.memory.blocks if isinstance(b.value, str)}
    except BaseException as exc:  # a tool's SystemExit or KeyboardInterrupt is an error result too
        report = _error_report(exc)
    sys.stdout.flush()
    sys.stderr.flush()
    if os.getpid() != runner_pid:
        os._exit(0)  # a process the tool forked returned through here: only the runner itself reports
    with os.fdopen(result_fd, "wb") as channel:
        channel.write(json.dumps(report, ensure_ascii=False).encode("utf-8", errors="backslashreplace"))
    # Skip interpreter shutdown: leftover non-daemon threads or atexit hooks from the tool must not stall the exit.
    os._exit(0)


if __name__ == "__main__":
    main()
