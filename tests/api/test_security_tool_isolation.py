"""Finding 2 of issue 7: a custom tool run through the live server cannot reach the server's secrets, files,
database or processes, and its resource use is capped. Each probe runs inside a real tool, started with
letta-client (`agents.tools.run`), while a real secret sits in the server process' environment (the test server
runs in this process, so its pid is ours). Bubblewrap must work here: these tests fail, not skip, without it."""

import errno
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from letta_client import Letta
from pydantic import SecretStr
from sqlalchemy.engine import make_url

import memlet
from memlet.config import Settings
from tests.conftest import LiveServer, reset_database
from tests.unit.test_sandbox import processes_with

SECRET = f"sk-isolation-{uuid.uuid4().hex}"
MAX_PROCESSES = 32
DISK_MB = 8


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("memlet-data")
    (path / "credentials.txt").write_text(SECRET)
    return path


@pytest.fixture(scope="module")
def sandbox_server(settings: Settings, pg_uri: str, data_dir: Path) -> Iterator[LiveServer]:
    with pytest.MonkeyPatch.context() as env:
        # The secrets a real deployment keeps in the server's environment.
        env.setenv("OPENAI_API_KEY", SECRET)
        env.setenv("MEMLET_PG_URI", pg_uri)
        limited = settings.model_copy(
            update={
                "data_dir": data_dir,
                "tool_max_processes": MAX_PROCESSES,
                "tool_disk_mb": DISK_MB,
                "tool_timeout_s": 20.0,
            }
        )
        server = LiveServer(limited).start()
        yield server
        server.stop()
    reset_database(pg_uri)


@pytest.fixture(scope="module")
def sdk(sandbox_server: LiveServer) -> Letta:
    return Letta(base_url=sandbox_server.base_url, max_retries=0, timeout=60)


@pytest.fixture(scope="module")
def agent_id(sdk: Letta) -> str:
    agent = sdk.agents.create(model="openai/gpt-4o-mini", embedding="openai/text-embedding-3-small")
    return agent.id


def run(sdk: Letta, agent_id: str, body: str, **args: Any) -> Any:
    """Create a tool `probe_<n>(**args)` whose body is `body`, attach it, and run it through the agent."""
    name = f"probe_{uuid.uuid4().hex[:10]}"
    params = ", ".join(f"{key}: {type(value).__name__}" for key, value in args.items())
    doc = "".join(f"        {key}: a value.\n" for key in args)
    source = f'def {name}({params}):\n    """Probe.\n\n    Args:\n{doc}    """\n' + body
    tool = sdk.tools.create(source_code=source)
    sdk.agents.tools.attach(tool.id, agent_id=agent_id)
    return sdk.agents.tools.run(agent_id=agent_id, tool_name=name, args=args)


def error_name(code: str) -> str:
    """A tool body that runs `code` and returns the name of the exception it raised, or "ok"."""
    indented = "\n".join(f"        {line}" for line in code.splitlines())
    return f"    import os, socket\n    try:\n{indented}\n    except BaseException as exc:\n        return type(exc).__name__\n    return 'ok'\n"


class TestSecrets:
    def test_no_server_variable_in_the_tool_environment(self, sdk: Letta, agent_id: str) -> None:
        body = "    import os\n    return {k: v for k, v in os.environ.items() if k not in ('PATH', 'PWD')}\n"
        result = run(sdk, agent_id, body)
        assert result.status == "success"
        assert isinstance(result.func_return, dict)
        ids = {k: result.func_return.pop(k) for k in ("LETTA_AGENT_ID", "LETTA_TOOL_ID")}  # as Letta sets them
        assert ids["LETTA_AGENT_ID"] == agent_id
        assert result.func_return == {
            "HOME": "/tmp",
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "PYTHONWARNINGS": "ignore",
            "PYTHONUNBUFFERED": "1",
        }

    def test_server_proc_environ_not_readable(self, sdk: Letta, agent_id: str) -> None:
        result = run(sdk, agent_id, error_name("open(f'/proc/{pid}/environ').read()"), pid=os.getpid())
        assert (result.status, result.func_return) == ("success", "FileNotFoundError")

    def test_no_visible_process_holds_the_secret(self, sdk: Letta, agent_id: str) -> None:
        body = (
            "    import os\n"
            "    found = []\n"
            "    for pid in (p for p in os.listdir('/proc') if p.isdigit()):\n"
            "        try:\n"
            "            if secret in open(f'/proc/{pid}/environ').read():\n"
            "                found.append(pid)\n"
            "        except OSError:\n"
            "            pass\n"
            "    return {'visible': sorted(int(p) for p in os.listdir('/proc') if p.isdigit()), 'found': found}\n"
        )
        result = run(sdk, agent_id, body, secret=SECRET)
        # Only bubblewrap's pid 1 and the tool's runner exist in its pid namespace.
        assert result.func_return == {"visible": [1, 2], "found": []}

    def test_data_dir_not_listable(self, sdk: Letta, agent_id: str, data_dir: Path) -> None:
        listing = run(sdk, agent_id, error_name("os.listdir(path)"), path=str(data_dir))
        reading = run(sdk, agent_id, error_name("open(path).read()"), path=str(data_dir / "credentials.txt"))
        assert (listing.func_return, reading.func_return) == ("FileNotFoundError", "FileNotFoundError")

    def test_database_socket_not_connectable(self, sdk: Letta, agent_id: str, pg_uri: str) -> None:
        socket_dir = str(make_url(pg_uri).query["host"])
        sockets = [p.name for p in Path(socket_dir).iterdir() if p.is_socket()]
        assert sockets, "the embedded Postgres listens on a unix socket in this directory"
        connect = "socket.socket(socket.AF_UNIX).connect(path)"
        result = run(sdk, agent_id, error_name(connect), path=f"{socket_dir}/{sockets[0]}")
        assert (result.status, result.func_return) == ("success", "FileNotFoundError")

    def test_memlet_source_tree_not_writable(self, sdk: Letta, agent_id: str) -> None:
        target = Path(memlet.__file__).parent / f"pwned_{uuid.uuid4().hex[:8]}.py"
        body = "    try:\n        open(path, 'w').write('x')\n    except OSError as exc:\n        return exc.errno\n    return 0\n"
        result = run(sdk, agent_id, body, path=str(target))
        assert not target.exists()
        # Not mounted at all (an editable install) or mounted read-only (installed into the venv).
        assert result.func_return in (errno.ENOENT, errno.EROFS)


class TestLimits:
    def test_fork_bomb_stopped_by_process_limit(self, sdk: Letta, agent_id: str, sandbox_server: LiveServer) -> None:
        # Bounded on purpose: without a limit it stops itself after 200 sleeping children (killed with the call).
        body = (
            "    import os, time\n"
            "    for n in range(200):\n"
            "        if os.fork() == 0:\n"
            "            time.sleep(15)\n"
            "            os._exit(0)\n"
            "    return 'forked 200'\n"
        )
        result = run(sdk, agent_id, body)
        assert result.status == "error"
        assert "BlockingIOError: [Errno 11] Resource temporarily unavailable" in result.stderr[0]
        # The machine and the server are fine: the next call works.
        assert httpx.get(f"{sandbox_server.base_url}/v1/health/").status_code == 200
        assert run(sdk, agent_id, "    return 'alive'\n").func_return == "alive"

    def test_disk_filler_stopped_by_file_size_limit(self, sdk: Letta, agent_id: str) -> None:
        body = (
            "    with open('/tmp/fill', 'wb') as out:\n"
            "        for _ in range(64):\n"
            "            out.write(b'x' * 1024 * 1024)\n"
            "    return 'wrote 64 MB'\n"
        )
        result = run(sdk, agent_id, body)
        assert result.status == "error"
        assert "OSError: [Errno 27] File too large" in result.stderr[0]

    def test_many_files_stopped_by_private_tmp_size(self, sdk: Letta, agent_id: str) -> None:
        body = (
            "    for i in range(16):\n"
            "        with open(f'/tmp/part{i}', 'wb') as out:\n"
            "            out.write(b'x' * (DISK - 1) * 1024 * 1024)\n"
            "    return 'wrote them all'\n"
        ).replace("DISK", str(DISK_MB))
        result = run(sdk, agent_id, body)
        assert result.status == "error"
        assert "OSError: [Errno 28] No space left on device" in result.stderr[0]

    def test_setsid_child_gone_when_the_call_returns(self, sdk: Letta, agent_id: str) -> None:
        marker = f"memlet-escape-{uuid.uuid4().hex}"
        body = (
            "    import subprocess, sys\n"
            "    code = 'import os, time\\nif os.fork(): os._exit(0)\\ntime.sleep(60)'\n"
            "    subprocess.Popen(['setsid', sys.executable, '-c', code, marker])\n"
            "    return 'detached'\n"
        )
        try:
            result = run(sdk, agent_id, body, marker=marker)
            assert result.func_return == "detached"
            assert processes_with(marker) == []
        finally:
            for pid in processes_with(marker):  # the old code leaves it behind: do not leak it into other tests
                os.kill(pid, 9)


class TestDiagnostics:
    def test_reports_isolation_next_to_health(self, http_sandbox: httpx.Client) -> None:
        body = http_sandbox.get("/v1/health/diagnostics").json()
        sandbox = body["tool_sandbox"]
        assert (sandbox["isolation"], sandbox["reason"], sandbox["network"]) == ("bubblewrap", None, "on")
        assert sandbox["limits"]["processes"] == MAX_PROCESSES
        assert sandbox["limits"]["file_mb"] == DISK_MB
        assert body["process_dumpable"] is False
        # Letta's own health answer keeps its shape.
        assert set(http_sandbox.get("/v1/health/").json()) == {"version", "status"}

    def test_diagnostics_need_the_password(self, settings: Settings) -> None:
        guarded = LiveServer(settings.model_copy(update={"server_password": SecretStr("pw-diag")})).start()
        try:
            url = f"{guarded.base_url}/v1/health/diagnostics"
            assert httpx.get(url).status_code == 401
            answer = httpx.get(url, headers={"Authorization": "Bearer pw-diag"})
            assert answer.status_code == 200
            assert answer.json()["tool_sandbox"]["isolation"] == "bubblewrap"
        finally:
            guarded.stop()


@pytest.fixture
def http_sandbox(sandbox_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=sandbox_server.base_url, timeout=30) as client:
        yield client
