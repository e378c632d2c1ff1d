"""Process hardening applied at server start, whatever the tool isolation.

`PR_SET_DUMPABLE=0` makes the kernel refuse other processes of the same uid (a tool running without isolation,
for example) access to this process' `/proc/<pid>/environ`, memory and ptrace; only root with CAP_SYS_PTRACE
still can. Linux only; elsewhere a no-op that reports `None`.
"""

import ctypes
import ctypes.util
import sys

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


def make_undumpable() -> bool | None:
    """Mark this process non-dumpable; True when it is now, None where the platform has no such switch."""
    libc = _libc()
    if libc is None:
        return None
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    return bool(libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0)
