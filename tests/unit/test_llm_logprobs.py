"""Logprobs read from OpenAI-compatible answers (`memlet.llm.logprobs`): gathered over a stream's chunks in order,
absent when no chunk carried any, shown in OpenAI's shape whatever a server left out."""

from typing import Any

from memlet.llm.openai_result import StreamAssembler, result_from_completion


def chunk(content: str, logprobs: Any) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": content}, "logprobs": logprobs}]}


def token(text: str, logprob: float, **extra: Any) -> dict[str, Any]:
    return {"token": text, "logprob": logprob, **extra}


def test_a_stream_without_logprobs_has_none() -> None:
    stream = StreamAssembler(deltas=False)
    stream.feed(chunk("a", None))
    stream.feed(chunk("b", {}))
    assert stream.result().logprobs is None


def test_the_chunks_tokens_are_joined_in_order() -> None:
    stream = StreamAssembler()
    stream.feed({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None}]})
    stream.feed(chunk("Hi", {"content": [token("Hi", -0.25, bytes=[72, 105], top_logprobs=[])], "refusal": None}))
    stream.feed(chunk(" there", {"content": [token(" there", -1.5, top_logprobs=[token(" then", -2)])]}))
    stream.feed({"choices": [{"index": 1, "delta": {}, "logprobs": {"content": [token("other", -9)]}}]})
    assert stream.result().logprobs == {
        "content": [
            {"token": "Hi", "bytes": [72, 105], "logprob": -0.25, "top_logprobs": []},
            {
                "token": " there",
                "bytes": None,
                "logprob": -1.5,
                "top_logprobs": [{"token": " then", "bytes": None, "logprob": -2.0}],
            },
        ],
        "refusal": None,
    }


def test_unusable_tokens_are_left_out() -> None:
    stream = StreamAssembler(deltas=False)
    stream.feed(chunk("x", {"content": [token("x", True), {"logprob": -1}, "junk", token("y", -1, bytes="no")]}))
    stream.feed(chunk("z", {"content": "not a list", "refusal": [token("no", -0.5, top_logprobs=[1, token("n", -1)])]}))
    assert stream.result().logprobs == {
        "content": [{"token": "y", "bytes": None, "logprob": -1.0, "top_logprobs": []}],
        "refusal": [
            {
                "token": "no",
                "bytes": None,
                "logprob": -0.5,
                "top_logprobs": [{"token": "n", "bytes": None, "logprob": -1.0}],
            }
        ],
    }


def test_a_whole_completion_keeps_its_logprobs() -> None:
    message = {"role": "assistant", "content": "ok"}
    choice = {"index": 0, "message": message, "finish_reason": "stop", "logprobs": {"content": [token("ok", -0.1)]}}
    result = result_from_completion({"choices": [choice]})
    assert result.logprobs == {
        "content": [{"token": "ok", "bytes": None, "logprob": -0.1, "top_logprobs": []}],
        "refusal": None,
    }
    assert result_from_completion({"choices": [{**choice, "logprobs": None}]}).logprobs is None
