"""A step's provider trace: the request memlet posted for the step's LLM call and the answer, as Letta 0.16.8
records them by default (`track_provider_trace`), written with the step's row (`runs.step_write`).

The request is the body as posted: the bytes the OpenAI-compatible client encoded (reused, not encoded again),
or the body Anthropic's SDK was handed. The response is what Letta stores for the same call: for a request that
streams tokens, its streaming adapter's summary (`{"content": {"tool_call", "content"}, "id", "model", "role",
"type", "usage"}`, the tool call and content parts as JSON text); otherwise the provider's whole answer (a
`chat.completion`, or Anthropic's `message`), here rebuilt from the streamed reply memlet read it from, or, when
the call failed, `{"error", "error_type"}`. A streamed call that failed keeps no trace (Letta's kept what had
streamed when the stream broke off midway).
"""

import time
from typing import Any

import orjson

from memlet import ids
from memlet.db import models as orm
from memlet.errors import LLMError
from memlet.llm.openai_http import encode_json
from memlet.llm.types import ChatResult
from memlet.runs.trace_write import TraceWrite

AGENT_STEP = "agent_step"  # Letta's LLMCallType for an agent's step
_ANTHROPIC = frozenset({"anthropic", "minimax"})
_ANTHROPIC_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}
PREFIX = "provider_trace"


def step_trace(
    *,
    agent: orm.Agent,
    org_id: str,
    run_id: str | None,
    user_id: str | None,
    step_id: str,
    sent: bytes | dict[str, Any],
    result: ChatResult | Exception,
    streamed: bool,
) -> TraceWrite:
    """The trace row of a step's LLM call; `result`: its reply, or the error it failed with (Letta keeps
    `{"error", "error_type"}` then)."""
    request = sent if isinstance(sent, bytes) else encode_json(sent)
    llm_config = agent.llm_config or {}
    response: dict[str, Any]
    if isinstance(result, Exception):
        # The provider's own words where the error kept them (Letta kept the SDK error's text).
        error = result.detail if isinstance(result, LLMError) and result.detail else str(result)
        response = {"error": error, "error_type": type(result).__name__}
    elif streamed:
        response = _stream_summary(result, llm_config)
    elif result.raw_response is not None:  # a Responses API answer: the provider's own object
        response = result.raw_response
    elif llm_config.get("model_endpoint_type") in _ANTHROPIC:
        response = _anthropic_message(result)
    else:
        response = _chat_completion(result)
    return TraceWrite(
        id=ids.new_id(PREFIX),
        organization_id=org_id,
        step_id=step_id,
        agent_id=agent.id,
        run_id=run_id,
        user_id=user_id,
        call_type=AGENT_STEP,
        llm_config=llm_config,
        request_json=request.decode(),
        response_json=orjson.dumps(response).decode(),
    )


def _json_text(value: dict[str, Any]) -> str:
    return orjson.dumps(value).decode()


def _stream_summary(result: ChatResult, llm_config: dict[str, Any]) -> dict[str, Any]:
    """Letta's streaming adapter's record: the last tool call and the content parts (each as JSON text), the
    provider's message id, model and usage (its own usage object when it sent one)."""
    last = result.tool_calls[-1] if result.tool_calls else None
    tool_call = None
    if last is not None:
        call = {"id": last.id, "type": "function", "function": {"arguments": last.arguments, "name": last.name}}
        tool_call = _json_text(call)
    parts: list[dict[str, Any]] = []
    if result.thinking:
        for block in result.thinking:
            if block.redacted is not None:
                parts.append({"type": "redacted_reasoning", "data": block.redacted})
            else:
                parts.append(_reasoning(block.text, block.signature))
    elif result.reasoning:
        parts.append(_reasoning(result.reasoning, None))
    if result.content:
        parts.append({"type": "text", "text": result.content, "signature": None})
    usage = result.raw_usage or {
        "input_tokens": result.usage.prompt_tokens,
        "output_tokens": result.usage.completion_tokens,
    }
    return {
        "content": {"tool_call": tool_call, "content": [_json_text(p) for p in parts]},
        "id": result.response_id,
        "model": result.model or llm_config.get("model"),
        "role": "assistant",
        "type": "message",
        "usage": usage,
    }


def _reasoning(text: str, signature: str | None) -> dict[str, Any]:
    return {"type": "reasoning", "is_native": True, "reasoning": text, "signature": signature}


def _chat_completion(result: ChatResult) -> dict[str, Any]:
    """The `chat.completion` an OpenAI-compatible provider answers for this reply."""
    message: dict[str, Any] = {"role": "assistant", "content": result.content}
    if result.reasoning:
        message["reasoning_content"] = result.reasoning
    if result.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in result.tool_calls
        ]
    return {
        "id": result.response_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": result.model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": result.finish_reason, "logprobs": result.logprobs}
        ],
        "usage": result.raw_usage,
    }


def _anthropic_message(result: ChatResult) -> dict[str, Any]:
    """The `message` Anthropic's API answers for this reply."""
    content: list[dict[str, Any]] = []
    for block in result.thinking:
        if block.redacted is not None:
            content.append({"type": "redacted_thinking", "data": block.redacted})
        else:
            content.append({"type": "thinking", "thinking": block.text, "signature": block.signature})
    if result.content:
        content.append({"type": "text", "text": result.content})
    for call in result.tool_calls:
        try:
            arguments = orjson.loads(call.arguments or "{}")
        except orjson.JSONDecodeError:
            arguments = call.arguments
        content.append({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments})
    stop = result.finish_reason
    return {
        "id": result.response_id,
        "type": "message",
        "role": "assistant",
        "model": result.model,
        "content": content,
        "stop_reason": _ANTHROPIC_STOP.get(stop or "", stop),
        "stop_sequence": None,
        "usage": result.raw_usage,
    }
