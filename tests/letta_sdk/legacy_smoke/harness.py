"""What every flow of the legacy-SDK smoke shares: the old SDK's client, with each parsed response also validated
against the old SDK's declared type, ``step`` (one call, recorded), the mock LLM's scripting, and ``Ctx`` (the ids one
flow leaves for the next)."""

import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pydantic
from letta_client import Letta
from letta_client.core.serialization import convert_and_respect_annotation_metadata

BASE, MOCK = sys.argv[1], sys.argv[2].removesuffix("/").removesuffix("/v1")
MCP_URL = sys.argv[3] if len(sys.argv) > 3 else ""
client = Letta(base_url=BASE)
results: list[tuple[str, bool, str]] = []


@dataclass
class Ctx:
    """What a flow leaves for the next: the main agent, the roll_dice tool, a second agent, a batch."""

    aid: str = ""
    tool: Any = None
    agent2: Any = None
    batch: Any = None


# The old SDK builds its models without validating them (Fern's construct_type), so a wrong field type or a missing
# required field would not raise there. Every response it parses is also validated here, with pydantic, against the
# type the old SDK declares; a validation error fails the step that made the call.
invalid: list[str] = []


def _checked(original: Callable[..., Any]) -> Callable[..., Any]:
    def construct_type(*, type_: Any, object_: Any) -> Any:
        try:
            # Fern's own field aliases (FieldMetadata: `inputSchema` for input_schema, ...) applied first, as it does.
            read = convert_and_respect_annotation_metadata(object_=object_, annotation=type_, direction="read")
            pydantic.TypeAdapter(type_).validate_python(read)
        except pydantic.ValidationError as exc:
            invalid.append(str(exc))
        except Exception:  # a type pydantic cannot adapt is not memlet's concern
            pass
        return original(type_=type_, object_=object_)

    return construct_type


for _module in list(sys.modules.values()):
    name = _module.__name__
    wraps_it = name.startswith("letta_client.") and name != "letta_client.core.unchecked_base_model"
    if wraps_it and hasattr(_module, "construct_type"):
        _module.construct_type = _checked(_module.construct_type)  # type: ignore[attr-defined]


def step(name: str, fn: Callable[[], Any], *, letta_too: str = "") -> Any:
    """Run one call; ``letta_too`` says why it fails against Letta 0.16.8 as well (reported, not counted)."""
    invalid.clear()
    try:
        value = fn()
        if invalid:
            raise ValueError("the old SDK's types reject the response: " + " | ".join(invalid))
    except Exception as exc:  # the smoke records every failure and goes on
        detail = f"{type(exc).__name__}: {exc}"
        if letta_too:
            results.append((name, True, f"fails with Letta 0.16.8 too: {letta_too}"))
            print(f"same {name}: {letta_too} ({detail[:200]})", flush=True)
            return None
        results.append((name, False, detail[:2000]))
        print(f"FAIL {name}: {detail[:2000]}", flush=True)
        traceback.print_exc(limit=3)
        return None
    results.append((name, True, ""))
    print(f"ok   {name}", flush=True)
    return value


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


def script(*replies: dict[str, Any]) -> None:
    """Queue the mock LLM's next chat replies (its /_mock/script control route)."""
    httpx.post(f"{MOCK}/_mock/script", json={"replies": list(replies)}, timeout=5).raise_for_status()


def text(content: str) -> dict[str, Any]:
    return {"kind": "message", "content": content, "finish_reason": "stop"}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "message", "calls": [{"name": name, "arguments": arguments}], "finish_reason": "tool_calls"}


PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="


def roll_dice(sides: int) -> str:
    """Roll a die.

    Args:
        sides (int): How many sides the die has.

    Returns:
        str: The roll.
    """
    return str(min(4, sides))


def wait_run(run_id: str) -> Any:
    for _ in range(120):
        r = client.runs.retrieve(run_id)
        if r.status not in ("created", "running"):
            return r
        time.sleep(0.5)
    raise TimeoutError(run_id)


def types_of(messages: Any) -> list[str]:
    return [type(m).__name__ for m in messages]


def reset_mock() -> None:
    httpx.post(f"{MOCK}/_mock/reset", timeout=5).raise_for_status()


def summary() -> int:
    """Print the tally and the failures; the exit status (1 when a call failed that works with Letta 0.16.8)."""
    failed = [r for r in results if not r[1]]
    same = [r for r in results if r[1] and r[2]]
    passed = len(results) - len(failed) - len(same)
    print(f"\n{passed} of {len(results)} calls passed; {len(same)} fail with Letta 0.16.8 too")
    for name, _, detail in same:
        print(f"  SAME   {name}: {detail}")
    for name, _, detail in failed:
        print(f"  FAILED {name}: {detail.splitlines()[0][:300]}")
    return 1 if failed else 0
