"""Who can reach this server: the start-up rule for network exposure, and loopback names for the Host check.

Anyone who can call the API can run code on this machine: `POST /v1/tools/run`, custom tools created with
`POST /v1/tools` and run by `POST /v1/agents/{id}/tools/{name}/run` or by the agent loop. So there is one rule, checked
before anything starts: a server that listens beyond loopback needs a password, unless the operator accepts the risk
with `MEMLET_ALLOW_INSECURE=true` (e.g. behind a proxy that authenticates), which is logged as a warning. A server
that starts is therefore allowed to run code, and no route checks again.
"""

import ipaddress

from memlet.config import Settings
from memlet.log import get_logger, log_fields

log = get_logger("exposure")


class UnsafeExposureError(Exception):
    """The settings would serve the API beyond loopback with no password and no explicit opt-out."""


def is_loopback_host(host: str) -> bool:
    """``localhost``, any 127.0.0.0/8 address or ``::1`` (bracketed or not); anything else may be reachable."""
    name = host.strip().lower().removesuffix(".")
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_exposed_without_password(settings: Settings) -> bool:
    return settings.password is None and not is_loopback_host(settings.host)


def refuse_unsafe_exposure(settings: Settings) -> None:
    """Raise UnsafeExposureError unless the server is loopback-only, has a password, or the operator opted out."""
    if is_exposed_without_password(settings) and not settings.allow_insecure:
        raise UnsafeExposureError(
            f"refusing to listen on {settings.host}:{settings.port} without a password: anyone who can reach that "
            "address could run code on this machine through the API. Set MEMLET_SERVER_PASSWORD (clients send it "
            "as their bearer token / api_key), or set MEMLET_ALLOW_INSECURE=true to serve it unprotected anyway."
        )


def warn_at_startup(settings: Settings, euid: int | None) -> None:
    """Log the risks the operator accepted: an unprotected exposed server, running as root (``euid`` 0)."""
    if is_exposed_without_password(settings) and settings.allow_insecure:
        log.warning(
            "serving without a password beyond loopback (MEMLET_ALLOW_INSECURE=true): anyone who can reach this "
            "address can read every agent and run code on this machine",
            extra=log_fields(event="insecure_exposure", host=settings.host, port=settings.port),
        )
    if euid == 0:
        log.warning(
            "running as root: custom tools and anyone allowed to run them act with root's rights; "
            "run memlet as an unprivileged user",
            extra=log_fields(event="running_as_root", euid=euid),
        )
