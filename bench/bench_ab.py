"""Two checkouts side by side, their sends interleaved: server + Postgres CPU per send of each.

    .venv/bin/python bench/bench_ab.py <checkout A> <checkout B> [--sends 150] [--burst N]
        [--shape one|search|memory-edit|letta-code|conversation-memory-edit|list-messages|list-agents|long-buffer]
        [--env-a KEY=VALUE ...] [--env-b KEY=VALUE ...]
    .venv/bin/python bench/bench_ab.py . . --env-a MEMLET_GC_YOUNG_THRESHOLD=700    # one checkout, two settings

Each checkout's memlet runs (with this interpreter) on an embedded Postgres of its own, both answered by one mock
LLM; the sends alternate A, B, A, B... and each send's CPU (the server process and its Postgres) is read around
it. Both see the same moment of the machine, which a run of one after the other does not (the machine this
project is measured on drifts by ±25% within minutes). Shapes: a one-step send, a two-step `conversation_search`
turn, Letta Code's turn (a conversation send streamed in the background with token chunks and an otid), a memory
edit (`memory_insert`, then a reply; a blocking send) in the agent's own thread and in a conversation, a list of
the agent's newest 50 messages of 1,000 (the yardstick's phase d) and a list of 50 agents of 1,000 (phase f): not
sends, but measured the same way; and a one-step send to an agent whose buffer holds 1,000 messages (~190 KB of
JSON, ~50k tokens: past what the prompt's size alone proves fits, so each step counts its tokens). `--burst N`: N
clients send at once before the measured requests, which then start from pools full of idle connections.
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_loop import AGENT
from bench.harness import postgres_cpu_s, process_cpu_s
from tests.conftest import free_port
from tests.mock_llm import Reply

ROOT = Path(__file__).resolve().parents[1]
SEARCH = [Reply.tool_call("conversation_search", {"query": "tea"}).to_dict(), Reply.text("found it").to_dict()]
MEMORY_EDIT = [
    Reply.tool_call("memory_insert", {"label": "human", "new_string": "Likes tea."}).to_dict(),
    Reply.text("noted").to_dict(),
]
SCRIPTS = {"search": SEARCH, "memory-edit": MEMORY_EDIT, "conversation-memory-edit": MEMORY_EDIT}


class Side:
    """One checkout's server on its own embedded Postgres, an agent and a conversation of it."""

    def __init__(self, checkout: Path, mock_url: str, settings: list[str]) -> None:
        self.checkout = checkout
        self.label = " ".join([str(checkout), *settings])
        self.data = Path(tempfile.mkdtemp(prefix="bench-ab."))
        self.port = free_port()
        env = {
            **os.environ,
            "MEMLET_DATA_DIR": str(self.data),
            "MEMLET_LOG_LEVEL": "WARNING",
            "OPENAI_API_KEY": "sk-mock",
            "OPENAI_BASE_URL": mock_url,
            **dict(setting.split("=", 1) for setting in settings),
        }
        command = [sys.executable, "-m", "memlet", "server", "--port", str(self.port)]
        self.server = subprocess.Popen(command, cwd=checkout, env=env, stdout=subprocess.DEVNULL)
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=60)
        self.spent: list[tuple[float, float]] = []

    def ready(self, shape: str, burst: int = 0) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if self.http.get("/v1/health/").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        warm = self.http.post("/v1/agents/", json={**AGENT, "name": "warm-up"}).json()["id"]
        for i in range(20):
            self.http.post(f"/v1/agents/{warm}/messages", json={"messages": [{"role": "user", "content": f"w{i}"}]})
        if burst:
            self._burst(burst)
        self.agent = self.http.post("/v1/agents/", json={**AGENT, "name": "ab"}).json()["id"]
        self.conversation = self.http.post("/v1/conversations/", params={"agent_id": self.agent}, json={}).json()["id"]
        if shape == "list-agents":  # 1,000 agents with two blocks and the base tools each
            body = {
                **AGENT,
                "memory_blocks": [{"label": "human", "value": "Bob"}, {"label": "persona", "value": "Sam"}],
            }
            for n in range(1000):
                self.http.post("/v1/agents/", json={**body, "name": f"fill-{n}"}).raise_for_status()
        if shape in ("list-messages", "long-buffer"):  # 1,000 messages: 20 sends of 50 user messages, each answered
            words = "lorem ipsum dolor" if shape == "list-messages" else "lorem ipsum dolor sit amet " * 5
            for batch in range(20):
                texts = [f"fill {batch} {i} {words}" for i in range(50)]
                body = {"messages": [{"role": "user", "content": text} for text in texts]}
                self.http.post(f"/v1/agents/{self.agent}/messages", json=body).raise_for_status()

    def _burst(self, clients: int) -> None:
        """`clients` clients at once, three sends and three lists each: both of the server's pools then hold many
        idle connections, as after a busy moment."""

        def client(n: int) -> None:
            with httpx.Client(base_url=str(self.http.base_url), timeout=60) as http:
                agent = http.post("/v1/agents/", json={**AGENT, "name": f"burst-{n}"}).json()["id"]
                for i in range(3):
                    body = {"messages": [{"role": "user", "content": f"b{i}"}]}
                    http.post(f"/v1/agents/{agent}/messages", json=body).raise_for_status()
                    http.get(f"/v1/agents/{agent}/messages", params={"limit": 50}).raise_for_status()

        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(client, range(clients)))

    def cpu(self) -> tuple[float, float]:
        return process_cpu_s(self.server.pid), postgres_cpu_s(self.data / "pgdata")

    def send(self, shape: str, i: int) -> None:
        if shape == "list-agents":
            response = self.http.get("/v1/agents/", params={"limit": 50})
            assert response.status_code == 200 and len(response.json()) == 50, response.text
            return
        if shape == "list-messages":
            response = self.http.get(f"/v1/agents/{self.agent}/messages", params={"limit": 50})
            assert response.status_code == 200 and len(response.json()) == 50, response.text
            return
        message: dict[str, Any] = {"role": "user", "content": f"hello {i}"}
        if shape == "conversation-memory-edit":
            path = f"/v1/conversations/{self.conversation}/messages"
            response = self.http.post(path, json={"messages": [message], "streaming": False})
            assert response.status_code == 200, response.text
            return
        if shape != "letta-code":
            response = self.http.post(f"/v1/agents/{self.agent}/messages", json={"messages": [message]})
            assert response.status_code == 200, response.text
            return
        message["otid"] = f"otid-{i}-{time.monotonic_ns()}"
        body = {"streaming": True, "stream_tokens": True, "background": True, "include_pings": True}
        path = f"/v1/conversations/{self.conversation}/messages"
        with self.http.stream("POST", path, json={**body, "messages": [message]}) as response:
            assert response.status_code == 200
            assert "[DONE]" in "".join(response.iter_text())

    def stop(self) -> None:
        self.http.close()
        self.server.send_signal(signal.SIGINT)
        self.server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("checkouts", nargs=2, type=Path)
    parser.add_argument("--sends", type=int, default=150)
    shapes = (
        "one",
        "search",
        "memory-edit",
        "letta-code",
        "conversation-memory-edit",
        "list-messages",
        "list-agents",
        "long-buffer",
    )
    parser.add_argument("--shape", choices=shapes, default="one")
    parser.add_argument("--burst", type=int, default=0, help="clients sending at once before the measured sends")
    for side in ("a", "b"):
        parser.add_argument(f"--env-{side}", action="append", default=[], metavar="KEY=VALUE", help="server setting")
    args = parser.parse_args()
    mock_port = free_port()
    mock = subprocess.Popen([sys.executable, "-m", "tests.mock_llm", "--port", str(mock_port)], cwd=ROOT)
    mock_url = f"http://127.0.0.1:{mock_port}"
    settings = (args.env_a, args.env_b)
    sides = [
        Side(checkout.resolve(), f"{mock_url}/v1", env) for checkout, env in zip(args.checkouts, settings, strict=True)
    ]
    try:
        for side in sides:
            side.ready(args.shape, args.burst)
        for i in range(args.sends):
            for side in sides:
                if args.shape in SCRIPTS:  # scripting the mock is not timed
                    httpx.post(f"{mock_url}/_mock/script", json={"replies": SCRIPTS[args.shape]}).raise_for_status()
                server_before, pg_before = side.cpu()
                side.send(args.shape, i)
                server_after, pg_after = side.cpu()
                side.spent.append(((server_after - server_before) * 1000, (pg_after - pg_before) * 1000))
        for side in sides:
            server = statistics.mean(s for s, _ in side.spent)
            pg = statistics.mean(p for _, p in side.spent)
            print(
                f"{side.label:<32} {args.shape}: server {server:6.2f} ms + Postgres {pg:5.2f} ms"
                f" = {server + pg:6.2f} ms per send (mean of {args.sends})"
            )
    finally:
        for side in sides:
            side.stop()
        mock.send_signal(signal.SIGINT)
        mock.wait(timeout=20)


if __name__ == "__main__":
    main()
