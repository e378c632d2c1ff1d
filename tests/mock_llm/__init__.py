"""A deterministic OpenAI-compatible server for memlet's tests: chat completions (SSE or not), embeddings, models,
OpenAI's Responses API and Anthropic's messages API over the same script and recordings.

    mock = MockLLM.start()                      # uvicorn on 127.0.0.1:<ephemeral> in a background thread
    mock.script(Reply.tool_call("send_message", {"message": "hi"}), Reply.text("done"))
    mock.script_when("PERSONA-WORD", Reply.text("only for the agent whose system prompt has it"))
    ...  point an OpenAI client at mock.base_url ...
    mock.requests[-1]["tool_choice"]            # every chat request body, in arrival order
    mock.stop()

Each chat request consumes the next scripted reply. With nothing scripted the answer is the plain text
``DEFAULT_REPLY_TEXT`` ("OK"), whatever the request's tool_choice, so an unscripted test never hangs or loops on
tool calls. ``Reply.error(..., times=n)`` queues n identical failures. Embedding requests have their own queue
(``script_embeddings``) that only honours error and delay replies.

Another process can script a standalone server (``python -m tests.mock_llm --port N``) over HTTP with
``POST /_mock/script {"replies": [...], "target": "chat"|"embeddings", "when": marker}`` (see ``script_remote``),
``POST /_mock/reset`` and ``GET /_mock/requests``.

Modules: ``replies`` (Reply, Call), ``state`` (queues, marker routing, recordings), ``openai_wire``,
``responses_wire`` and ``anthropic_wire`` (the three chat formats; a Responses request is recorded with
``"_api": "responses"``), ``embeddings`` (hashed bags of words), ``web`` (a page and a fake Exa
API for the web tools), ``app`` (the routes), ``server`` (MockLLM, script_remote).
"""

from tests.mock_llm.app import MOCK_IMAGE, create_app
from tests.mock_llm.embeddings import DEFAULT_EMBEDDING_DIM, OLLAMA_EMBEDDING_DIMS, hashed_embedding
from tests.mock_llm.openai_wire import CREATED, MODEL_IDS, usage_for
from tests.mock_llm.replies import DEFAULT_REPLY_TEXT, Call, Reply
from tests.mock_llm.server import MockLLM, main, script_remote
from tests.mock_llm.state import MockState
from tests.mock_llm.web import EXA_UNKNOWN, MOCK_EXA_KEY

__all__ = [
    "CREATED",
    "DEFAULT_EMBEDDING_DIM",
    "DEFAULT_REPLY_TEXT",
    "EXA_UNKNOWN",
    "MOCK_EXA_KEY",
    "MOCK_IMAGE",
    "MODEL_IDS",
    "OLLAMA_EMBEDDING_DIMS",
    "Call",
    "MockLLM",
    "MockState",
    "Reply",
    "create_app",
    "hashed_embedding",
    "main",
    "script_remote",
    "usage_for",
]
