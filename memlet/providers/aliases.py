"""Model names a provider has retired, and the models Letta 0.16.8 sends their agents to instead.

Google retired `gemini-3-pro-preview`; an llm_config naming it on Google AI or Vertex (a stored agent, an agent
file, a client's raw config) runs `gemini-3.1-pro-preview`, and a handle ending in the retired name that no provider
lists resolves to the same handle ending in its successor.
"""

from collections.abc import Mapping
from typing import Any

_GOOGLE_TYPES = frozenset({"google_ai", "google_vertex"})
_RETIRED_GOOGLE_MODELS = {"gemini-3-pro-preview": "gemini-3.1-pro-preview"}


def successor_handle(handle: str) -> str | None:
    """`handle` with a retired model name at its end replaced by its successor; None when it names none."""
    for retired, successor in _RETIRED_GOOGLE_MODELS.items():
        if handle.endswith(f"/{retired}"):
            return handle.removesuffix(retired) + successor
    return None


def redirect_retired_model(config: Mapping[str, Any]) -> dict[str, Any] | None:
    """The llm_config fields to change when `config` names a retired Google model (None when it does not)."""
    model, endpoint = config.get("model"), config.get("model_endpoint_type")
    if not isinstance(endpoint, str) or endpoint not in _GOOGLE_TYPES or not isinstance(model, str):
        return None  # a malformed config is left to the schema's validation
    successor = _RETIRED_GOOGLE_MODELS.get(model)
    if successor is None:
        return None
    changes: dict[str, Any] = {"model": successor}
    handle = config.get("handle")
    if isinstance(handle, str) and (new_handle := successor_handle(handle)):
        changes["handle"] = new_handle
    return changes
