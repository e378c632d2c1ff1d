"""Per-token log probabilities of a chat answer (OpenAI's `choices[0].logprobs`), for clients training on them.

An agent whose llm_config has `return_logprobs` asks the provider for them (`logprobs: true`, and `top_logprobs`
when set); a streamed answer carries them piece by piece on its chunks, `Logprobs` puts the pieces together. The
value is OpenAI's `ChoiceLogprobs` as Letta returns it: `{"content": [...], "refusal": [...]}`, each token as
`{token, bytes, logprob, top_logprobs: [{token, bytes, logprob}]}`, in that order; a token a provider sent without
its text or its number is left out (it could not be shown in that shape).
"""

from typing import Any

_PARTS = ("content", "refusal")


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _bytes(value: object) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(b, int) and not isinstance(b, bool) for b in value):
        return value
    return None


def _alternative(item: object) -> dict[str, Any] | None:
    if not isinstance(item, dict) or not isinstance(item.get("token"), str):
        return None
    logprob = _number(item.get("logprob"))
    if logprob is None:
        return None
    return {"token": item["token"], "bytes": _bytes(item.get("bytes")), "logprob": logprob}


def _token(item: object) -> dict[str, Any] | None:
    head = _alternative(item)
    if head is None:
        return None
    top = item.get("top_logprobs") if isinstance(item, dict) else None
    alternatives = [a for a in map(_alternative, top if isinstance(top, list) else ()) if a is not None]
    return {**head, "top_logprobs": alternatives}


def _tokens(value: object) -> list[dict[str, Any]]:
    return [t for t in map(_token, value if isinstance(value, list) else ()) if t is not None]


class Logprobs:
    """The logprobs of one answer, fed chunk by chunk (`feed`) or whole (`of_choice`)."""

    def __init__(self) -> None:
        self.parts: dict[str, list[dict[str, Any]] | None] = dict.fromkeys(_PARTS)

    def feed(self, value: dict[str, Any]) -> None:
        """Add one chunk's `choices[0].logprobs`."""
        for part in _PARTS:
            if isinstance(value.get(part), list):
                self.parts[part] = [*(self.parts[part] or ()), *_tokens(value[part])]

    def result(self) -> dict[str, Any]:
        return dict(self.parts)

    @classmethod
    def of_choice(cls, value: object) -> dict[str, Any] | None:
        """A whole answer's `choices[0].logprobs` (None when the provider sent none)."""
        if not isinstance(value, dict):
            return None
        gathered = cls()
        gathered.feed(value)
        return gathered.result()
