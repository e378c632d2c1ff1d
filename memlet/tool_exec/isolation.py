"""Tool isolation with bubblewrap (`bwrap`): which mode this host supports, and the sandbox's mount layout.

Under bubblewrap each tool call gets its own pid, mount, ipc, uts (and, with the network off, net) namespaces;
a read-only view of the system directories, the interpreter's prefixes and the runner script only; a new /proc
that shows the sandbox's own processes; a private size-capped tmpfs as /tmp (also HOME and the working directory)
and /dev/shm. The data directory, the database socket and the rest of the host's files are simply not there.
When the runner (pid 2 inside) exits, bwrap's pid 1 exits and the kernel kills whatever is left in the namespace.

Whether bwrap works is probed once per process (a container's default seccomp profile, for example, blocks the
namespaces); without it the sandbox still applies rlimits, the uid drop (as root), a clean environment and a
process-group kill, and the server says so at start and in `/v1/health/diagnostics`.
"""

import functools
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

RUNNER_PATH = Path(__file__).with_name("_sandbox_runner.py")
# Where the runner script appears inside the sandbox (the memlet source tree itself is not mounted).
RUNNER_MOUNT = "/run/memlet/sandbox_runner.py"
SANDBOX_TMP = "/tmp"
PRIVATE_TMPFS = (SANDBOX_TMP, "/dev/shm")
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What programs commonly need from /etc: name resolution, TLS roots, time zone, the dynamic linker's cache.
ETC_ENTRIES = (
    "resolv.conf",
    "hosts",
    "nsswitch.conf",
    "host.conf",
    "gai.conf",
    "localtime",
    "timezone",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "pki",
    "alternatives",
    "protocols",
    "services",
    "mime.types",
)
_PROBE_TIMEOUT_S = 15.0

IsolationChoice = Literal["auto", "bubblewrap", "none"]


@dataclass(frozen=True)
class Isolation:
    """The isolation a tool call gets on this host: `bubblewrap`, or `none` with the reason."""

    mode: Literal["bubblewrap", "none"]
    reason: str | None = None
    bwrap: str | None = None


class IsolationUnavailableError(RuntimeError):
    """MEMLET_TOOL_ISOLATION=bubblewrap was asked for, but bubblewrap does not work on this host."""


def resolve_isolation(choice: IsolationChoice) -> Isolation:
    """The isolation for `choice`; `bubblewrap` raises when bwrap cannot run here, `auto` falls back to none."""
    if choice == "none":
        return Isolation("none", "disabled by MEMLET_TOOL_ISOLATION=none")
    bwrap, reason = probe_bubblewrap()
    if bwrap is not None:
        return Isolation("bubblewrap", None, bwrap)
    if choice == "bubblewrap":
        raise IsolationUnavailableError(f"MEMLET_TOOL_ISOLATION=bubblewrap, but {reason}")
    return Isolation("none", reason)


@functools.cache
def probe_bubblewrap() -> tuple[str | None, str | None]:
    """`check_bubblewrap` for the bwrap on PATH, run once per process."""
    return check_bubblewrap(shutil.which("bwrap"))


def check_bubblewrap(bwrap: str | None) -> tuple[str | None, str | None]:
    """(bwrap, None) when it can build the real sandbox layout here and run Python in it, else (None, why not)."""
    if bwrap is None:
        return None, "bubblewrap (bwrap) is not installed"
    argv = [*sandbox_argv(bwrap, network=False, disk_mb=1, hidden=()), sys.executable, "-I", "-c", "pass"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=_PROBE_TIMEOUT_S, check=False, env={})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"bwrap could not be started: {exc}"
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", errors="replace").strip()[:300]
        return None, f"bwrap cannot create the sandbox here (exit {done.returncode}: {detail})"
    return bwrap, None


def sandbox_argv(bwrap: str, *, network: bool, disk_mb: int, hidden: Sequence[str]) -> list[str]:
    """bwrap's arguments up to (not including) the command; the caller adds `--info-fd N` as needed."""
    return list(_sandbox_argv(bwrap, network, disk_mb, tuple(hidden), os.geteuid() == 0))


@functools.cache
def _sandbox_argv(bwrap: str, network: bool, disk_mb: int, hidden: tuple[str, ...], as_root: bool) -> tuple[str, ...]:
    args = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    args += ["--unshare-cgroup-try", "--hostname", "sandbox"]
    if not network:
        args.append("--unshare-net")
    # As root there is no user namespace: keep only what the runner needs to drop to its unprivileged uid.
    args += ["--cap-drop", "ALL"]
    if as_root:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    # The private tmpfs first: a Python installation under /tmp (e.g. a checkout in /tmp) is bound on top of it.
    size = str(disk_mb * 1024 * 1024)
    for target in PRIVATE_TMPFS:
        args += ["--perms", "1777", "--size", size, "--tmpfs", target]
    bound = _bind_system(args)
    bound += _bind_python(args, bound)
    _make_parents(args, RUNNER_MOUNT)
    args += ["--ro-bind", str(RUNNER_PATH), RUNNER_MOUNT, "--proc", "/proc", "--dev", "/dev"]
    # A secret directory below a bound prefix (e.g. a data dir inside the venv) is covered by an empty tmpfs.
    for path in hidden:
        if os.path.isdir(path) and any(_is_within(path, root) for root in bound):
            args += ["--tmpfs", path]
    args += ["--remount-ro", "/", "--chdir", SANDBOX_TMP]
    return tuple(args)


def _bind_system(args: list[str]) -> list[str]:
    bound: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
            bound.append(path)
    for name in ETC_ENTRIES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return bound


def _bind_python(args: list[str], bound: list[str]) -> list[str]:
    """The interpreter's installation and the virtualenv, read-only; never their parents (e.g. /root)."""
    added: list[str] = []
    for prefix in dict.fromkeys((sys.base_prefix, sys.prefix)):
        real = os.path.realpath(prefix)
        if any(_is_within(real, root) for root in [*bound, *added]):
            continue
        _make_parents(args, real)
        args += ["--ro-bind", real, real]
        if prefix != real:
            _make_parents(args, prefix)
            args += ["--symlink", real, prefix]
        added.append(real)
    return added


def _make_parents(args: list[str], path: str) -> None:
    """Create `path`'s ancestors traversable (bwrap would make them 0700, closed to the tool's uid)."""
    for parent in reversed(Path(path).parents[:-1]):
        if str(parent) not in PRIVATE_TMPFS:  # those exist already, world-writable and sticky
            args += ["--perms", "0755", "--dir", str(parent)]


def drops_to_own_uid(isolation: Isolation) -> bool:
    """Whether tools get an unprivileged uid of their own: only a root server can, and without bubblewrap only
    when that uid can still read the interpreter (a pyenv under a private /root, for example, it cannot)."""
    if os.geteuid() != 0:
        return False
    return isolation.mode == "bubblewrap" or _python_world_readable()


@functools.cache
def _python_world_readable() -> bool:
    for prefix in (sys.base_prefix, sys.prefix):
        path = Path(os.path.realpath(prefix))
        if any(not os.stat(p).st_mode & stat.S_IXOTH for p in [path, *path.parents]):
            return False
    return True


def _is_within(path: str, root: str) -> bool:
    return os.path.commonpath([os.path.realpath(path), os.path.realpath(root)]) == os.path.realpath(root)
