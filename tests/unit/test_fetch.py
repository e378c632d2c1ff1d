"""One-off outbound requests (`memlet.net.fetch`: model lists, key checks, image fetches, callbacks) against real
listeners on 127.0.0.1: the outbound policy holds, redirects are not followed, what cannot be sent is refused before
anything is sent, and a body past its limit is refused without being read whole."""

import asyncio

import pytest

from memlet.net.fetch import DEADLINE_FACTOR, Fetcher, FetchError, TooLargeError, UnsendableRequestError
from memlet.net.outbound import OutboundPolicy, parse_allowed_hosts
from tests.api.listener import allowing, listener


async def test_the_request_arrives_as_given() -> None:
    with listener() as target:
        async with Fetcher(allowing(target), 5) as fetcher:
            answer = await fetcher.request(
                "POST",
                f"{target.url}/api/show",
                headers={"x-api-key": "k"},
                params={"limit": 1000},
                json_body={"n": "é"},
            )
        assert [(s.method, s.path, s.body, s.headers["x-api-key"]) for s in target.seen] == [
            ("POST", "/api/show?limit=1000", {"n": "é"}, "k")
        ]
        assert target.seen[0].headers["content-type"] == "application/json"
        assert (answer.status, answer.content_type, answer.json()["model"]) == (
            200,
            "application/json",
            "foreign-model",
        )


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::ffff:127.0.0.1]"])
async def test_a_refused_host_is_never_reached(host: str) -> None:
    with listener() as target:
        async with Fetcher(OutboundPolicy(), 5) as fetcher:
            with pytest.raises(FetchError):
                await fetcher.request("GET", f"http://{host}:{target.port}/v1/models")
        assert target.seen == []


async def test_a_redirect_is_answered_not_followed() -> None:
    with listener() as target, listener() as elsewhere:
        target.redirect_to = elsewhere.url
        async with Fetcher(allowing(target, elsewhere), 5) as fetcher:
            answer = await fetcher.request("POST", f"{target.url}/callback", json_body={}, max_bytes=0)
        assert (answer.status, answer.body) == (307, b"")
        assert len(target.seen) == 1 and elsewhere.seen == []


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/v1/mo\ndels", {}),  # yarl alone would drop the newline and send the request
        ("/v1/\x17models", {}),
        ("/v1/models", {"Authorization": "Bearer sk-clé"}),
        ("/v1/models", {"Authorization": "Bearer sk\r\nX-Injected: 1"}),
    ],
)
async def test_what_cannot_be_sent_is_refused_before_sending(path: str, headers: dict[str, str]) -> None:
    with listener() as target:
        async with Fetcher(allowing(target), 5) as fetcher:
            with pytest.raises(UnsendableRequestError):
                await fetcher.request("GET", target.url + path, headers=headers)
        assert target.seen == []


class EndlessBody:
    """Answers every request with a chunked body that never ends; counts the bytes it managed to send."""

    def __init__(self) -> None:
        self.sent = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b"x" * 65536
        try:
            while True:
                writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                await writer.drain()
                self.sent += len(chunk)
        except ConnectionError:
            writer.close()


async def test_a_body_past_the_limit_is_refused_without_reading_it_whole() -> None:
    endless = EndlessBody()
    server = await asyncio.start_server(endless.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    policy = OutboundPolicy(parse_allowed_hosts(f"127.0.0.1:{port}"))
    async with Fetcher(policy, 5) as fetcher:
        with pytest.raises(TooLargeError):
            await asyncio.wait_for(fetcher.request("GET", f"http://127.0.0.1:{port}/x", max_bytes=1_000_000), 10)
    server.close()
    assert endless.sent < 20_000_000  # stopped near the limit, not after reading an endless body


async def test_a_declared_length_past_the_limit_is_refused_at_once() -> None:
    with listener() as target:
        target.body = b"x" * 2000
        async with Fetcher(allowing(target), 5) as fetcher:
            with pytest.raises(TooLargeError):
                await fetcher.request("GET", f"{target.url}/big", max_bytes=1000)
            answer = await fetcher.request("GET", f"{target.url}/big", max_bytes=2000)
        assert len(answer.body) == 2000


async def test_an_answer_dripped_a_byte_at_a_time_ends_at_the_deadline() -> None:
    async def drip(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 1000000\r\n\r\n")
        try:
            while True:  # each byte well inside the read timeout: only the whole request's deadline ends it
                writer.write(b"x")
                await writer.drain()
                await asyncio.sleep(0.05)
        except ConnectionError:
            writer.close()

    server = await asyncio.start_server(drip, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    policy = OutboundPolicy(parse_allowed_hosts(f"127.0.0.1:{port}"))
    began = asyncio.get_running_loop().time()
    async with Fetcher(policy, 0.5) as fetcher:
        with pytest.raises(FetchError):
            await asyncio.wait_for(fetcher.request("GET", f"http://127.0.0.1:{port}/slow.png"), 10)
    server.close()
    assert asyncio.get_running_loop().time() - began < 0.5 * DEADLINE_FACTOR + 1.5
