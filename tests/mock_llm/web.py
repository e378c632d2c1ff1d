"""The mock's stand-ins for the web tools: a small HTML page (also slow, and a redirect) under ``/_mock/``, and a fake Exa API
under ``/exa`` (``/exa/contents``, ``/exa/search``) that records every request and checks its ``x-api-key``."""

import asyncio
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from tests.mock_llm.state import MockState

MOCK_EXA_KEY = "exa-mock-key"
# A URL whose name holds this gets no result from the fake /contents (Letta then downloads the page itself).
EXA_UNKNOWN = "exa-unknown"
PUBLISHED = "2024-05-01T00:00:00.000Z"

MOCK_PAGE = """<!DOCTYPE html>
<html><head><title>Teapots</title></head>
<body>
<nav><a href="/">Home</a> | <a href="/shop">Shop</a></nav>
<article>
<h1>A short history of teapots</h1>
<p>The first teapots were made in China during the <b>Yuan dynasty</b>, from the purple clay of Yixing, and they
travelled to Europe with the tea trade of the seventeenth century.</p>
<ul><li>Yixing clay</li><li>Porcelain</li><li>Silver</li></ul>
<p>European makers copied the Chinese shapes for decades before porcelain could be fired in Meissen, and silver
teapots became the mark of a wealthy household in Georgian England.</p>
</article>
<footer>Copyright mock</footer>
</body></html>
"""


def _refused(request: Request, state: MockState, endpoint: str) -> Response | None:
    key = request.headers.get("x-api-key", "")
    with state.lock:
        state.exa_requests.append({"endpoint": endpoint, "x-api-key": key, "body": None})
    if key != MOCK_EXA_KEY:
        return JSONResponse({"requestId": "mock", "error": "Invalid API key"}, status_code=401)
    return None


async def _recorded_body(request: Request, state: MockState) -> dict[str, Any]:
    body: dict[str, Any] = await request.json()
    with state.lock:
        state.exa_requests[-1]["body"] = body
    return body


def routes(state: MockState) -> list[Route]:
    async def page(request: Request) -> Response:
        return Response(MOCK_PAGE, media_type="text/html; charset=utf-8")

    async def slow_page(request: Request) -> Response:
        await asyncio.sleep(float(request.query_params.get("s", "1")))
        return await page(request)

    async def redirect(request: Request) -> Response:
        return RedirectResponse(request.query_params.get("to", "/_mock/page.html"), status_code=302)

    async def contents(request: Request) -> Response:
        if (refused := _refused(request, state, "contents")) is not None:
            return refused
        body = await _recorded_body(request, state)
        results = [
            {
                "id": url,
                "url": url,
                "title": "Teapots (Exa)",
                "publishedDate": PUBLISHED,
                "author": "Exa Author",
                "text": f"Exa's text of {url}",
            }
            for url in body.get("urls", [])
            if EXA_UNKNOWN not in url
        ]
        return JSONResponse({"requestId": "mock", "results": results, "statuses": []})

    async def search(request: Request) -> Response:
        if (refused := _refused(request, state, "search")) is not None:
            return refused
        body = await _recorded_body(request, state)
        results = [
            {
                "id": f"https://example.com/{n}",
                "url": f"https://example.com/{n}",
                "title": f"Result {n} for {body['query']}",
                "score": 0.5,
                "publishedDate": PUBLISHED if n == 1 else None,
                "author": None,
                "text": f"Full text {n}",
                "highlights": [f"Highlight {n}"],
                "highlightScores": [0.9],
                "summary": f"Summary {n}" if n == 1 else "",
            }
            for n in range(1, min(int(body.get("numResults", 10)), 2) + 1)
        ]
        return JSONResponse({"requestId": "mock", "resolvedSearchType": "neural", "results": results})

    return [
        Route("/_mock/page.html", page, methods=["GET"]),
        Route("/_mock/slow-page.html", slow_page, methods=["GET"]),
        Route("/_mock/redirect", redirect, methods=["GET"]),
        Route("/exa/contents", contents, methods=["POST"]),
        Route("/exa/search", search, methods=["POST"]),
    ]
