"""How many sandboxes run at once, and which unprivileged uid each one runs as.

`SlotPool` bounds concurrent tool calls in this process (MEMLET_MAX_CONCURRENT_TOOLS); a call waits for a free
slot at most its timeout. It is thread-safe because tests run several servers, each on its own event loop, in
one process.

`claim_uid` gives a server running as root a distinct uid per running sandbox, unique across processes too (an
flock on one file per uid; several workers share the data dir), so RLIMIT_NPROC counts one call's processes and
no two concurrent tools can signal each other.
"""

import asyncio
import contextlib
import fcntl
import os
import random
import threading
from collections import deque
from pathlib import Path

UID_RANGE = 1000


class SlotPool:
    def __init__(self, size: int) -> None:
        self.size = size
        self._busy = 0
        self._lock = threading.Lock()
        self._waiters: deque[asyncio.Future[None]] = deque()

    async def acquire(self, timeout_s: float) -> bool:
        """Take a slot, waiting at most `timeout_s`; False when none became free in time."""
        with self._lock:
            if self._busy < self.size:
                self._busy += 1
                return True
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
        try:
            await asyncio.wait_for(waiter, timeout_s)
        except BaseException as exc:
            with self._lock, contextlib.suppress(ValueError):
                self._waiters.remove(waiter)
                # Still queued: nobody handed it a slot. Otherwise the hand-over sees it cancelled and passes it on.
            if isinstance(exc, TimeoutError):
                return False
            raise
        return True

    def release(self) -> None:
        with self._lock:
            while self._waiters:
                waiter = self._waiters.popleft()
                if waiter.done():
                    continue
                try:
                    waiter.get_loop().call_soon_threadsafe(self._hand_over, waiter)
                except RuntimeError:  # its event loop is closed: nobody is waiting there any more
                    continue
                return
            self._busy -= 1

    def _hand_over(self, waiter: "asyncio.Future[None]") -> None:
        if waiter.done():  # timed out or cancelled between the hand-over and now
            self.release()
        else:
            waiter.set_result(None)


_pools: dict[int, SlotPool] = {}
_pools_lock = threading.Lock()


def slot_pool(size: int) -> SlotPool:
    """The process-wide pool for this size (one per configured MEMLET_MAX_CONCURRENT_TOOLS)."""
    with _pools_lock:
        return _pools.setdefault(size, SlotPool(size))


def claim_uid(lock_dir: Path, base: int) -> tuple[int, int] | None:
    """(uid, lock fd) of a uid no other sandbox holds; close the fd to give it back. None when all are taken."""
    lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    start = random.randrange(UID_RANGE)  # spreads the search; not a secret
    for step in range(UID_RANGE):
        offset = (start + step) % UID_RANGE
        fd = os.open(lock_dir / f"{offset}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return base + offset, fd
    return None
