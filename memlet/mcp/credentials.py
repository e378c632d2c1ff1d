"""MCP server credentials: sealed at rest with the secrets keyring, masked in every response.

A bearer token, custom header values and stdio `env` values are stored sealed (`Keyring.seal`, the key of
`MEMLET_ENCRYPTION_KEY`). Responses show `MASK` in their place, so a client that sends a response back unchanged
(`MASK` as a value) keeps the stored value rather than overwriting it with the mask.
"""

import json
import re

from memlet.crypto import Keyring
from memlet.db import models as orm

MASK = "********"
# `{{ NAME }}` or `{{ NAME | default }}` in a header value or token: filled from the calling agent's secrets.
_TEMPLATE = re.compile(r"\{\{\s*([A-Z_][A-Z0-9_]*)\s*(?:\|\s*([^}]*?)\s*)?\}\}")
BEARER = "Bearer "
DEFAULT_AUTH_HEADER = "Authorization"


def bare_token(token: str | None) -> str | None:
    """A token without a leading "Bearer " (Letta stores it so); empty means none."""
    if token is None:
        return None
    token = token.strip()
    if token[: len(BEARER)].lower() == BEARER.lower():
        token = token[len(BEARER) :].strip()
    return token or None


def seal_map(keyring: Keyring, values: dict[str, str] | None) -> str | None:
    return keyring.seal(json.dumps(values)) if values else None


def reveal_map(keyring: Keyring, stored: str | None, what: str) -> dict[str, str]:
    text = keyring.reveal(stored, what)
    return {str(k): str(v) for k, v in json.loads(text).items()} if text else {}


def merge_masked(new: dict[str, str] | None, old: dict[str, str]) -> dict[str, str] | None:
    """`new` with every masked value replaced by the stored one of the same key (None stays None)."""
    if new is None:
        return None
    return {k: (old.get(k, "") if v == MASK else v) for k, v in new.items()}


def token(keyring: Keyring, row: orm.MCPServer) -> str | None:
    return keyring.reveal(row.auth_token_enc, f"token of MCP server {row.server_name!r}")


def custom_headers(keyring: Keyring, row: orm.MCPServer) -> dict[str, str]:
    return reveal_map(keyring, row.custom_headers_enc, f"headers of MCP server {row.server_name!r}")


def env(keyring: Keyring, row: orm.MCPServer) -> dict[str, str]:
    return reveal_map(keyring, row.env_enc, f"env of MCP server {row.server_name!r}")


def fill_templates(value: str, secrets: dict[str, str]) -> str:
    """`value` with each `{{ NAME }}` replaced by the secret NAME (else its default; else left as written)."""

    def one(match: re.Match[str]) -> str:
        if match[1] in secrets:
            return secrets[match[1]]
        return match[2] if match[2] is not None else match[0]

    return _TEMPLATE.sub(one, value)


def request_headers(keyring: Keyring, row: orm.MCPServer, secrets: dict[str, str] | None = None) -> dict[str, str]:
    """The headers sent to an HTTP server: its custom headers, then the token under its auth header, with
    templates filled from the calling agent's secrets (Letta's `{{ NAME }}`)."""
    headers = custom_headers(keyring, row)
    secret = token(keyring, row)
    if secret:
        name = row.auth_header or DEFAULT_AUTH_HEADER
        headers[name] = BEARER + secret if name.lower() == DEFAULT_AUTH_HEADER.lower() else secret
    return {k: fill_templates(v, secrets or {}) for k, v in headers.items()}


def masked(values: dict[str, str]) -> dict[str, str] | None:
    """The keys of a secret map, every value masked (None when empty)."""
    return dict.fromkeys(values, MASK) or None
