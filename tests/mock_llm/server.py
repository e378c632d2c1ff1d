"""``MockLLM``: the mock served by uvicorn in a background thread (or the foreground), with its scripting API;
``script_remote`` scripts one running in another process."""

import argparse
import contextlib
import socket
import threading
import time
from typing import Any, Self

import httpx
import uvicorn

from tests.mock_llm.app import create_app
from tests.mock_llm.replies import Reply
from tests.mock_llm.state import MockState


class MockLLM:
    """A running mock server plus its scripting API (same process)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port
        self._state = MockState()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @classmethod
    def start(cls, port: int = 0) -> Self:
        """Serve in a daemon thread on 127.0.0.1 (an ephemeral port unless given) and wait until it listens."""
        mock = cls(port=port)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((mock.host, port))
        mock.port = sock.getsockname()[1]
        mock._server = uvicorn.Server(mock._config())
        mock._thread = threading.Thread(target=mock._server.run, kwargs={"sockets": [sock]}, daemon=True)
        mock._thread.start()
        deadline = time.monotonic() + 10
        while not mock._server.started:
            if time.monotonic() > deadline or not mock._thread.is_alive():
                raise RuntimeError("mock LLM server did not start")
            time.sleep(0.01)
        return mock

    def _config(self) -> uvicorn.Config:
        # Short graceful shutdown: a handler still sleeping in Reply.delay must not hold up stop().
        return uvicorn.Config(
            create_app(self._state),
            host=self.host,
            port=self.port,
            log_level="warning",
            lifespan="off",
            ws="none",
            timeout_graceful_shutdown=1,
        )

    def serve_forever(self) -> None:
        """Run in the foreground (the standalone ``python -m tests.mock_llm`` mode)."""
        uvicorn.Server(self._config()).run()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next chat requests (of any agent not routed by ``script_when``), in order."""
        self._state.enqueue(replies, "chat")

    def script_when(self, marker: str, *replies: Reply) -> None:
        """Queue replies for the chat requests whose system prompt contains `marker` (e.g. a word of one agent's
        persona), in order; such a request answers from this queue only (the default reply once it is empty)."""
        self._state.enqueue(replies, "chat", when=marker)

    def script_embeddings(self, *replies: Reply) -> None:
        """Queue error/delay replies for the next embedding requests."""
        self._state.enqueue(replies, "embeddings")

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every chat completion request body received so far."""
        with self._state.lock:
            return list(self._state.requests)

    @property
    def authorizations(self) -> list[str]:
        """The Authorization header of every models / chat request so far ("" when none was sent)."""
        with self._state.lock:
            return list(self._state.authorizations)

    @property
    def embedding_authorizations(self) -> list[str]:
        """The Authorization header of every OpenAI-style embedding request so far."""
        with self._state.lock:
            return list(self._state.embedding_authorizations)

    @property
    def chat_headers(self) -> list[dict[str, str]]:
        """The headers of every chat completions request so far (lower-case names)."""
        with self._state.lock:
            return list(self._state.chat_headers)

    @property
    def root_url(self) -> str:
        """The server without the ``/v1`` of `base_url` (the page routes are ``/_mock/...``, fake Exa ``/exa``)."""
        return f"http://{self.host}:{self.port}"

    @property
    def sent_logprobs(self) -> list[dict[str, Any]]:
        """The logprobs of each answer to a chat request that asked for them (`logprobs: true`), in answer order,
        as a non-streamed choice carries them (`tests.mock_llm.logprobs`)."""
        with self._state.lock:
            return [answer.whole() for answer in self._state.sent_logprobs]

    @property
    def exa_requests(self) -> list[dict[str, Any]]:
        """Every request to the fake Exa API so far: ``{"endpoint", "x-api-key", "body"}``."""
        with self._state.lock:
            return list(self._state.exa_requests)

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        with self._state.lock:
            return list(self._state.embedding_requests)

    def reset(self) -> None:
        """Forget scripts and recorded requests (and the enforced window)."""
        self._state.reset()

    def enforce_window(self, tokens: int | None) -> None:
        """Answer every chat request whose prompt plus completion limit exceeds ``tokens`` with an overflow."""
        self._state.window = tokens


def script_remote(base_url: str, *replies: Reply, target: str = "chat", when: str | None = None) -> None:
    """Script a mock running in another process; ``base_url`` is its ``http://host:port/v1``; ``when`` routes the
    chat replies as ``MockLLM.script_when`` does."""
    root = base_url.removesuffix("/").removesuffix("/v1")
    payload: dict[str, Any] = {"replies": [r.to_dict() for r in replies], "target": target}
    if when is not None:
        payload["when"] = when
    httpx.post(f"{root}/_mock/script", json=payload, timeout=5).raise_for_status()


def main() -> None:
    parser = argparse.ArgumentParser(description="Run memlet's mock OpenAI-compatible server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8999)
    args = parser.parse_args()
    print(f"mock LLM listening on http://{args.host}:{args.port}/v1", flush=True)
    # uvicorn shuts down gracefully on SIGINT, then raises it again: an ended mock is not an error.
    with contextlib.suppress(KeyboardInterrupt):
        MockLLM(args.host, args.port).serve_forever()
