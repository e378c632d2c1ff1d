"""Bounded retries of transient provider failures (429s, 5xx, connection errors), honouring Retry-After."""

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from memlet.llm.errors import ProviderError, is_credit_message, to_llm_error
from memlet.llm.wire_errors import ProviderConnectionError, ProviderHTTPError, ProviderStatusError

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry 429s, 5xx and connection failures."""

    max_retries: int = 3
    base_delay_s: float = 0.5
    # Also caps a provider's Retry-After, so one request never waits unboundedly.
    max_delay_s: float = 30.0

    def backoff(self, attempt: int) -> float:
        """Exponential delay for retry number ``attempt`` (0-based), with up to 25% jitter."""
        return min(self.max_delay_s, self.base_delay_s * 2.0**attempt * random.uniform(1.0, 1.25))


def retry_after_seconds(exc: Exception) -> float | None:
    """The wait a failed provider response asked for, if any."""
    return parse_retry_after(exc.headers) if isinstance(exc, ProviderStatusError) else None


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait per ``retry-after-ms`` or ``Retry-After`` (delta-seconds or an HTTP date); None if absent."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            pass
    try:
        when = email.utils.parsedate_to_datetime(headers.get("retry-after") or "")
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def is_retryable(exc: Exception) -> bool:
    """Transient failures: connection errors and timeouts, 408/409/429 (but not exhausted quota) and 5xx."""
    if isinstance(exc, ProviderConnectionError):
        return True
    if not isinstance(exc, ProviderStatusError):
        return False
    if exc.status_code == 429:
        return not is_credit_message(str(exc))
    return exc.status_code in (408, 409) or exc.status_code >= 500


@dataclass(frozen=True, slots=True)
class SDKErrors:
    """How to read one provider client's exceptions: their base class, which are transient, the wait they ask for,
    and the memlet error each becomes."""

    base: type[Exception] | tuple[type[Exception], ...]
    retryable: Callable[[Exception], bool]
    retry_after: Callable[[Exception], float | None]
    convert: Callable[[Exception], ProviderError]


OPENAI_ERRORS = SDKErrors(ProviderHTTPError, is_retryable, retry_after_seconds, to_llm_error)


async def with_retries(call: Callable[[], Awaitable[T]], policy: RetryPolicy, errors: SDKErrors = OPENAI_ERRORS) -> T:
    """Await ``call()``, retrying transient provider errors per ``policy``; raise the mapped memlet error at the end."""
    attempt = 0
    while True:
        try:
            return await call()
        except errors.base as exc:
            if attempt >= policy.max_retries or not errors.retryable(exc):
                raise errors.convert(exc) from exc
            delay = errors.retry_after(exc)
            delay = policy.backoff(attempt) if delay is None else min(delay, policy.max_delay_s)
            log.warning("LLM call failed (%s); retry %d/%d in %.2fs", exc, attempt + 1, policy.max_retries, delay)
            await asyncio.sleep(delay)
            attempt += 1
