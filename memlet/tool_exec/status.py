"""What the tool sandbox can enforce on this host, decided once at start, logged, and shown in diagnostics."""

import asyncio
import math
from typing import Any

from memlet.config import Settings
from memlet.log import get_logger, log_fields
from memlet.tool_exec.isolation import drops_to_own_uid, resolve_isolation

log = get_logger("tool_exec")


async def sandbox_status(settings: Settings) -> dict[str, Any]:
    """Probe isolation (once per process), warn loudly about what is missing, and describe the sandbox.

    Raises IsolationUnavailableError when MEMLET_TOOL_ISOLATION=bubblewrap cannot be honoured.
    """
    isolation = await asyncio.to_thread(resolve_isolation, settings.tool_isolation)
    isolated = isolation.mode == "bubblewrap"
    own_uid = drops_to_own_uid(isolation)
    status: dict[str, Any] = {
        "isolation": isolation.mode,
        "requested": settings.tool_isolation,
        "reason": isolation.reason,
        "network": "on" if settings.tool_network else "off",
        "network_enforced": settings.tool_network or isolated,
        # A root server runs every call as an unprivileged uid of its own; otherwise tools share the server's uid.
        "tool_uid": "per-call" if own_uid else "server",
        "max_concurrent": settings.max_concurrent_tools,
        "limits": {
            "processes": settings.tool_max_processes if (isolated or own_uid) else None,
            "file_mb": settings.tool_disk_mb,
            "memory_mb": settings.tool_memory_mb,
            "cpu_s": math.ceil(settings.tool_timeout_s) + 1,
            "timeout_s": settings.tool_timeout_s,
        },
    }
    if not isolated:
        log.warning(
            "TOOL ISOLATION UNAVAILABLE: custom tools run without namespaces (rlimits, clean env and a "
            "process-group kill only); install bubblewrap and allow user namespaces to isolate them",
            extra=log_fields(event="tool_isolation_unavailable", **status),
        )
    if not status["network_enforced"]:
        log.warning(
            "MEMLET_TOOL_NETWORK=off cannot be enforced without tool isolation; tools still reach the network",
            extra=log_fields(event="tool_network_not_enforced"),
        )
    return status
