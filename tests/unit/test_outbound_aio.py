"""The HTTP layer of the OpenAI-compatible clients (`memlet.llm.openai_http` over `memlet.net.aio`): every
connection obeys the outbound policy, and a streamed answer's connection is kept for the next call."""

import asyncio

import pytest

from memlet.llm.openai_http import OpenAIHTTP
from memlet.llm.wire_errors import ProviderConnectionError
from memlet.net.aio import GuardedResolver, OutboundRefusedError
from memlet.net.outbound import OutboundPolicy, parse_allowed_hosts
from tests.api.listener import listener
from tests.unit.test_outbound_policy import FixedDNS


class TestPolicy:
    @pytest.mark.parametrize(
        "host",
        [
            "localhost",  # a name resolving to loopback: refused when the connection resolves it
            "127.0.0.1",  # addresses: refused before any request (aiohttp does not resolve them)
            "[::ffff:127.0.0.1]",
        ],
    )
    async def test_a_refused_host_is_never_reached(self, host: str) -> None:
        with listener() as target:
            http = OpenAIHTTP(f"http://{host}:{target.port}/v1", None, 2, OutboundPolicy())
            with pytest.raises(ProviderConnectionError):
                await http.post("/models", {})
            await http.aclose()
            assert target.seen == []

    @pytest.mark.parametrize("allowed", ["127.0.0.1:{port}", "localhost:{port}"])
    async def test_an_allowed_address_or_name_is_reached(self, allowed: str) -> None:
        with listener() as target:
            policy = OutboundPolicy(parse_allowed_hosts(allowed.format(port=target.port)))
            host = allowed.split(":")[0]
            http = OpenAIHTTP(f"http://{host}:{target.port}/v1", "sk-x", 2, policy)
            await http.post("/models", {"a": 1})
            await http.aclose()
            assert [(s.path, s.body, s.headers["authorization"]) for s in target.seen] == [
                ("/v1/models", {"a": 1}, "Bearer sk-x")
            ]


class TestResolver:
    async def test_it_gives_the_addresses_it_checked(self) -> None:
        FixedDNS.answers = {"rebind.example": [["8.8.8.8", "2606:4700::1111"], ["127.0.0.1"]]}
        resolver = GuardedResolver(FixedDNS())
        found = await resolver.resolve("rebind.example", 443, 0)  # type: ignore[arg-type]
        assert [(r["host"], r["port"], r["hostname"]) for r in found] == [
            ("8.8.8.8", 443, "rebind.example"),
            ("2606:4700::1111", 443, "rebind.example"),
        ]
        with pytest.raises(OutboundRefusedError):  # the name now points at loopback
            await resolver.resolve("rebind.example", 443, 0)  # type: ignore[arg-type]
        await resolver.close()

    async def test_one_private_answer_refuses_the_name(self) -> None:
        FixedDNS.answers = {"mixed.example": [["8.8.8.8", "10.0.0.1"]]}
        with pytest.raises(OutboundRefusedError):
            await GuardedResolver(FixedDNS()).resolve("mixed.example", 80, 0)  # type: ignore[arg-type]


class SSEServer:
    """An HTTP/1.1 server answering every POST with a chunked SSE body whose end comes a little after [DONE]
    (as a provider's final chunk may); counts the connections it accepted."""

    def __init__(self) -> None:
        self.connections = 0
        self.requests = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                self.requests += 1
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                )
                for event in (b'data: {"n": 1}\n\n', b"data: [DONE]\n\n"):
                    writer.write(b"%x\r\n%s\r\n" % (len(event), event))
                    await writer.drain()
                await asyncio.sleep(0.02)
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()


async def test_a_streamed_answer_leaves_its_connection_for_the_next_call() -> None:
    sse = SSEServer()
    server = await asyncio.start_server(sse.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    http = OpenAIHTTP(f"http://127.0.0.1:{port}/v1", None, 5)
    for _ in range(4):
        stream = await http.stream("/chat/completions", {})
        assert [event async for event in stream] == [{"n": 1}]
        await stream.close()
    await http.aclose()
    server.close()
    assert (sse.requests, sse.connections) == (4, 1)
