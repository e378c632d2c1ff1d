"""memlet: a maintained, wire-compatible server for the Letta (MemGPT) V1 REST API."""

import sys

__version__ = "0.1.0"
# The Letta server version memlet is wire-compatible with; reported by /v1/health/.
LETTA_COMPAT_VERSION = "0.16.8"

# httpx imports its command-line client (rich and pygments, ~3 MB of server RSS) when it can; a server never runs
# it. A None entry makes that optional import fail the way httpx expects (it then defines a stub `httpx.main`).
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
