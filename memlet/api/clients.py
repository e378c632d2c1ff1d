"""Letta changed some responses for letta-client 1.x; this recognises such clients the way Letta 0.16.8 did."""

import re

from fastapi import Request

_V1_UA = re.compile(r"^(@letta-ai/letta-client|letta-client)/1\.")


def is_sdk_v1(request: Request) -> bool:
    """True for Stainless (1.x) SDKs, requests without a User-Agent, and ``letta-client/1.x`` user agents."""
    headers = request.headers
    if "x-stainless-package-version" in headers:
        return True
    ua = headers.get("user-agent")
    return not ua or bool(_V1_UA.match(ua))


def is_fern_sdk(request: Request) -> bool:
    """True for the pre-1.0 (Fern-generated) Letta SDKs: Python ``letta-client`` 0.1.x, TypeScript 0.0.x."""
    return request.headers.get("x-fern-sdk-name") in ("letta-client", "@letta-ai/letta-client")
