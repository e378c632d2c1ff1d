"""JSON from a provider, decoded fast and as leniently as the standard library.

orjson refuses a lone surrogate escape (``"\\ud800"``), which a model's output can hold; the standard library reads
it (the openai SDK did too), and memlet cleans such text before storing it. So orjson first, then ``json``.
"""

import json
from typing import Any

import orjson


class InvalidJSON(ValueError):
    """The text is not JSON."""


def decode_json(data: bytes | str) -> Any:
    """The decoded value of ``data``; ``InvalidJSON`` when neither decoder can read it."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidJSON(str(exc)) from exc
