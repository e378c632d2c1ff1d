"""Pure rules of a group's manager config: which columns a pattern sets, what a PATCH may change, and the voice
buffer limits. No I/O."""

from collections.abc import Iterable
from typing import Any

from memlet.db import models as orm
from memlet.errors import BadRequestError
from memlet.groups.schemas import (
    DynamicManager,
    DynamicManagerUpdate,
    ManagerConfig,
    ManagerConfigUpdate,
    RoundRobinManager,
    RoundRobinManagerUpdate,
    SleeptimeManager,
    SleeptimeManagerUpdate,
    SupervisorManager,
    SupervisorManagerUpdate,
    VoiceSleeptimeManager,
    VoiceSleeptimeManagerUpdate,
)

_MAX, _MIN = "max_message_buffer_length", "min_message_buffer_length"


def set_repr(values: Iterable[str]) -> str:
    """A set of strings written as Python writes it (``{'a', 'b'}``), sorted so the text is stable."""
    items = sorted(values)
    return "{" + ", ".join(repr(v) for v in items) + "}" if items else "set()"


def ensure_buffer_range(max_value: int | None, min_value: int | None) -> None:
    """Letta's voice-sleeptime buffer rules: both or neither; each above 4; max above min (else 400)."""
    if (max_value is None) != (min_value is None):
        raise BadRequestError(
            f"Both '{_MAX}' and '{_MIN}' must be provided together (got {_MAX}={max_value}, {_MIN}={min_value})"
        )
    if max_value is None or min_value is None:
        return
    if max_value <= 4 or min_value <= 4:
        raise BadRequestError(
            f"Both '{_MAX}' and '{_MIN}' must be greater than 4 (got {_MAX}={max_value}, {_MIN}={min_value})"
        )
    if max_value <= min_value:
        raise BadRequestError(f"'{_MAX}' must be greater than '{_MIN}' (got {_MAX}={max_value} <= {_MIN}={min_value})")


def columns_for_create(config: ManagerConfig) -> dict[str, Any]:
    """The group columns a new group's manager config sets."""
    match config:
        case RoundRobinManager():
            return {"manager_type": "round_robin", "max_turns": config.max_turns}
        case SupervisorManager():
            return {"manager_type": "supervisor", "manager_agent_id": config.manager_agent_id}
        case DynamicManager():
            return {
                "manager_type": "dynamic",
                "manager_agent_id": config.manager_agent_id,
                "max_turns": config.max_turns,
                "termination_token": config.termination_token,
            }
        case SleeptimeManager():
            frequency = config.sleeptime_agent_frequency
            return {
                "manager_type": "sleeptime",
                "manager_agent_id": config.manager_agent_id,
                "sleeptime_agent_frequency": frequency,
                "turns_counter": -1 if frequency else None,
            }
        case VoiceSleeptimeManager():
            ensure_buffer_range(config.max_message_buffer_length, config.min_message_buffer_length)
            return {
                "manager_type": "voice_sleeptime",
                "manager_agent_id": config.manager_agent_id,
                _MAX: config.max_message_buffer_length,
                _MIN: config.min_message_buffer_length,
            }
    raise BadRequestError(f"Unsupported manager type: {config.manager_type}")  # pragma: no cover


def columns_for_update(row: orm.Group, config: ManagerConfigUpdate) -> dict[str, Any]:
    """The columns a PATCH's manager config changes: the pattern must stay; only truthy values apply (Letta)."""
    if config.manager_type != row.manager_type:
        raise BadRequestError("Cannot change group pattern after creation")
    changes: dict[str, Any] = {}
    match config:
        case RoundRobinManagerUpdate():
            changes = {"max_turns": config.max_turns}
        case SupervisorManagerUpdate():
            changes = {"manager_agent_id": config.manager_agent_id}
        case DynamicManagerUpdate():
            changes = {
                "manager_agent_id": config.manager_agent_id,
                "max_turns": config.max_turns,
                "termination_token": config.termination_token,
            }
        case SleeptimeManagerUpdate():
            changes = {
                "manager_agent_id": config.manager_agent_id,
                "sleeptime_agent_frequency": config.sleeptime_agent_frequency,
            }
            if config.sleeptime_agent_frequency and row.turns_counter is None:
                changes["turns_counter"] = -1
        case VoiceSleeptimeManagerUpdate():
            max_value = config.max_message_buffer_length or row.max_message_buffer_length
            min_value = config.min_message_buffer_length or row.min_message_buffer_length
            ensure_buffer_range(max_value, min_value)
            changes = {"manager_agent_id": config.manager_agent_id, _MAX: max_value, _MIN: min_value}
    return {key: value for key, value in changes.items() if value}
