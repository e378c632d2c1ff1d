"""Structured (key=value / JSON) logging with secret masking, and each request's id and debug line.

Every line memlet logs passes through `SecretMasker`: the values of the configured keys and password, every secret
value the server has sealed or revealed since it started (agent secrets, provider keys), and token-like patterns
(`sk-...`, `Bearer ...`, passwords in URIs and query strings) are replaced by `***`, in messages, structured
fields and exception texts alike.
"""

import json
import logging
import os
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from contextvars import ContextVar
from typing import Any

from starlette.types import Scope

request_id_var: ContextVar[str | None] = ContextVar("request_id", default=None)


MASK = "***"
# Shorter values would mask ordinary words and numbers all over the logs.
MIN_SECRET_LEN = 6
_MAX_REMEMBERED = 10_000
_PATTERNS = re.compile(
    r"(?P<sk>\bsk-[A-Za-z0-9_\-]{6,})"
    r"|(?P<bearer>(?<=[Bb]earer )[^\s\"',;]+)"
    r"|(?P<userinfo>(?<=://)[^/\s:@\"']+:[^@\s\"'/]+(?=@))"
    # asyncpg quotes a value it could not encode: "invalid input for query argument $1: 'value' (reason)".
    r"|(?P<argument>(?<=query argument \$)\d+: .+?(?= \())"
    r"|(?P<param>(?<=[?&;\s\"'(])(?:password|passwd|pwd|api_key|apikey|token|secret)=[^&\s\"',;)]+)",
    re.IGNORECASE,
)


class SecretMasker:
    """Known secret values and token patterns, replaced by `***` in rendered log lines (thread-safe).

    Known values are found through an index of their first `MIN_SECRET_LEN` characters, so masking a line costs
    one dictionary lookup per character however many secrets the server knows.
    """

    def __init__(self) -> None:
        self._static: set[str] = set()
        self._learned: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()
        self._index: dict[str, list[str]] | None = None

    def configure(self, values: Iterable[str | None]) -> None:
        """Adds the values the server's own settings hold (keys, password); kept for the life of the process."""
        with self._lock:
            self._static |= {v for v in values if v and len(v) >= MIN_SECRET_LEN}
            self._index = None

    def remember(self, value: str | None) -> None:
        """A secret the server handled at run time (an agent secret, a provider key); the oldest are forgotten."""
        if not value or len(value) < MIN_SECRET_LEN or value in self._learned:
            return
        with self._lock:
            self._learned[value] = None
            while len(self._learned) > _MAX_REMEMBERED:
                self._learned.popitem(last=False)
            self._index = None

    def _known(self) -> dict[str, list[str]]:
        index = self._index
        if index is None:
            with self._lock:
                index = {}
                # Each value as written and as JSON escapes it (never shorter), longest first per prefix.
                forms = {f for v in self._static | set(self._learned) for f in (v, json.dumps(v)[1:-1])}
                for form in sorted(forms, key=len, reverse=True):
                    index.setdefault(form[:MIN_SECRET_LEN], []).append(form)
                self._index = index
        return index

    def _mask_known(self, text: str) -> str:
        index = self._known()
        if not index:
            return text
        parts: list[str] = []
        start = i = 0
        while i <= len(text) - MIN_SECRET_LEN:
            form = next((f for f in index.get(text[i : i + MIN_SECRET_LEN], ()) if text.startswith(f, i)), None)
            if form is None:
                i += 1
                continue
            parts += [text[start:i], MASK]
            i = start = i + len(form)
        parts.append(text[start:])
        return "".join(parts)

    def mask(self, text: str) -> str:
        return _PATTERNS.sub(_mask_match, self._mask_known(text))


def _mask_match(match: re.Match[str]) -> str:
    if match.lastgroup == "param":
        name, _, _ = match.group(0).partition("=")
        return f"{name}={MASK}"
    if match.lastgroup == "argument":
        number, _, _ = match.group(0).partition(":")
        return f"{number}: {MASK}"
    return MASK


masker = SecretMasker()


def remember_secret(value: str | None) -> None:
    masker.remember(value)


class JsonFormatter(logging.Formatter):
    """One JSON object per line, masked by `masker` after rendering (message, fields and exception text)."""

    def format(self, record: logging.LogRecord) -> str:
        return masker.mask(self._render(record))

    def _render(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if rid := request_id_var.get():
            entry["request_id"] = rid
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class MaskingFilter(logging.Filter):
    """Masks a record in place before another library's formatter renders it (uvicorn, the root logger)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = masker.mask(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = masker.mask(record.exc_text)
        if record.stack_info:
            record.stack_info = masker.mask(record.stack_info)
        return True


def mask_library_logs(names: Iterable[str] = ("", "uvicorn", "uvicorn.error", "uvicorn.access")) -> None:
    """Adds `MaskingFilter` to the handlers other code configured (call once their logging is set up)."""
    for name in names:
        for handler in logging.getLogger(name).handlers:
            if not any(isinstance(f, MaskingFilter) for f in handler.filters):
                handler.addFilter(MaskingFilter())


def configure_logging(level: str, secrets: Iterable[str | None] = ()) -> None:
    masker.configure(secrets)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger("memlet")
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    root.propagate = False


def get_logger(name: str) -> logging.Logger:
    return logging.getLogger(f"memlet.{name}")


def log_fields(**fields: Any) -> dict[str, Any]:
    """``logger.info("msg", extra=log_fields(agent_id=...))`` attaches structured fields."""
    return {"fields": fields}


def new_request_id() -> str:
    """A random version-4 UUID's 32 hex digits, as ``uuid.uuid4().hex``, without building a ``UUID`` (~3x faster)."""
    n = int.from_bytes(os.urandom(16), "big") & _UUID4_CLEAR | _UUID4_SET
    return f"{n:032x}"


_UUID4_CLEAR = ~((0xF000 << 64) | (0xC000 << 48))  # the version nibble and the variant bits
_UUID4_SET = (0x4000 << 64) | (0x8000 << 48)  # version 4, RFC 4122 variant


def request_id_of(given: bytes) -> str:
    """The caller's ``X-Request-ID`` (its first 64 bytes), or a new id when it sent none."""
    return given[:64].decode("latin-1") or new_request_id()


_http_log = get_logger("http")


def log_request(scope: Scope, status: int, started: float) -> None:
    """One debug line per request (method, path, status, ms), built only when the level shows it."""
    if _http_log.isEnabledFor(logging.DEBUG):
        ms = round((time.perf_counter() - started) * 1000, 2)
        fields = log_fields(method=scope["method"], path=scope["path"], status=status, ms=ms)
        _http_log.debug("request", extra=fields)
