"""Drive a chat-completions request (plain or voice route) through the one send path of ``SendService``.

Both modes hold the agent's turn lock as every other send does: a streamed request finding the agent busy gets the
409 busy body naming the active run at once (after ``stream_lock_wait_s``), a non-streamed one waits up to
``agent_lock_timeout_s`` like a blocking ``/messages`` send (Letta took no lock here).
"""

from collections.abc import AsyncIterator
from typing import Any

from memlet.agents.repository import AgentRepository
from memlet.messages.requests import LettaStreamingRequest
from memlet.turns.chat_completions import (
    ChatChunkRenderer,
    ChatCompletionRequest,
    assistant_texts,
    chat_completion,
    user_message,
)
from memlet.turns.sending import SendService
from memlet.turns.streaming import ViewOptions

RUN_TYPE = "openai_chat_completions"


class ChatCompletionSender:
    def __init__(self, send: SendService) -> None:
        self.send = send

    async def model_of(self, agent_id: str) -> str:
        """The agent's model name (the ``model`` of every chunk); 404 for an unknown agent."""
        async with self.send.deps.sessionmaker() as session:
            agent = await AgentRepository(session).get_or_404(self.send.actor.organization_id, agent_id)
        return str((agent.llm_config or {}).get("model") or "")

    @staticmethod
    def letta_request(body: ChatCompletionRequest, *, streamed: bool) -> LettaStreamingRequest:
        return LettaStreamingRequest(
            messages=[user_message(body)],
            streaming=streamed,
            stream_tokens=streamed,
            include_pings=False,
        )

    async def stream(self, agent_id: str, body: ChatCompletionRequest) -> AsyncIterator[str]:
        """Start the run and return its ``ChatCompletionChunk`` lines; early errors (busy, 404) raise here."""
        model = await self.model_of(agent_id)
        request = self.letta_request(body, streamed=True)

        def renderer(run_id: str, opts: ViewOptions) -> ChatChunkRenderer:
            return ChatChunkRenderer(run_id, opts, model, include_usage=body.include_usage)

        return await self.send.open_stream(agent_id, request, RUN_TYPE, renderer_for=renderer)

    async def complete(self, agent_id: str, body: ChatCompletionRequest) -> dict[str, Any]:
        """Run the turn to its end and answer one ``ChatCompletion`` (a failed run raises its error)."""
        model = await self.model_of(agent_id)
        done = await self.send.run_blocking(agent_id, self.letta_request(body, streamed=False), RUN_TYPE)
        text = "".join(assistant_texts(done.messages, done.opts, set()))
        return chat_completion(done.run_id, model, text, done.outcome.usage)
