"""Per-token log probabilities for the chat requests that ask for them (`logprobs: true`), as OpenAI sends them.

Every streamed piece of an answer (a piece of text or of a tool call's arguments) is one token. Token `i` of the
mock's answer number `n` has the log probability ``-(n / 4 + (i + 1) / 64)`` (exact in binary, so a value that
went through JSON compares equal), and `top_logprobs` alternatives when asked: the token itself first, then
``<alt-j>`` at one less each. A `top_logprobs` outside 0..20 is refused with OpenAI's 400.
"""

from typing import Any

from tests.mock_llm.replies import Reply

MAX_TOP_LOGPROBS = 20


def refusal(body: dict[str, Any]) -> Reply | None:
    """OpenAI's 400 for a `top_logprobs` it does not take (None when the request is fine)."""
    top = body.get("top_logprobs")
    if top is None or 0 <= top <= MAX_TOP_LOGPROBS:
        return None
    if top > MAX_TOP_LOGPROBS:
        wrong, expected, code = "above maximum", f"<= {MAX_TOP_LOGPROBS}", "integer_above_max_value"
    else:
        wrong, expected, code = "below minimum", ">= 0", "integer_below_min_value"
    message = f"Invalid 'top_logprobs': integer {wrong} value. Expected a value {expected}, but got {top} instead."
    return Reply.error(400, message=message, code=code)


def _entry(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode())}


class AnswerLogprobs:
    """The tokens of one answer, handed out piece by piece; `sent` is every one so far, in order."""

    def __init__(self, number: int, body: dict[str, Any]) -> None:
        self.number = number
        self.top = int(body.get("top_logprobs") or 0)
        self.sent: list[dict[str, Any]] = []

    def token(self, text: str) -> dict[str, Any]:
        """The `logprobs` of the chunk that streams `text` (one token)."""
        logprob = -(self.number / 4 + (len(self.sent) + 1) / 64)
        alternatives = [_entry(text, logprob)] + [_entry(f"<alt-{j}>", logprob - j) for j in range(1, self.top)]
        entry = {**_entry(text, logprob), "top_logprobs": alternatives[: self.top]}
        self.sent.append(entry)
        return {"content": [entry], "refusal": None}

    def whole(self) -> dict[str, Any]:
        """What the answer sent, as a non-streamed choice carries it."""
        return {"content": list(self.sent), "refusal": None}


def wanted(body: dict[str, Any]) -> bool:
    return body.get("logprobs") is True
