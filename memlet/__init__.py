"""memlet: a maintained, wire-compatible server for the Letta (MemGPT) V1 REST API."""

__version__ = "0.1.0"
# The Letta server version memlet is wire-compatible with; reported by /v1/health/.
LETTA_COMPAT_VERSION = "0.16.8"
