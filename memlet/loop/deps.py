"""What the loop needs from the app (`LoopDeps`) and what one request asks of it (`RunOptions`)."""

from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from memlet.config import Settings
from memlet.llm.client import LLMClient
from memlet.loop.agent_messaging import AgentMessenger
from memlet.loop.events import RunFinished
from memlet.loop.llm_clients import LLMClients
from memlet.loop.window_cache import WindowCache
from memlet.messages.schemas import StoredMessage
from memlet.passages.embedder import Embedder

# Awaited inside the transaction that closes a run ending normally, with its final event and the messages that
# transaction committed (the turn's last step's, when its commit closes the run; none when the run closes on its
# own): what it writes becomes visible together with the run's status (a sleeptime run's ``metadata.result``).
OnFinish = Callable[[AsyncSession, RunFinished, list[StoredMessage]], Awaitable[None]]


@dataclass
class LoopDeps:
    """What the loop needs from the app: a sessionmaker, settings, and an LLM client per llm_config.

    `turn_engine` gives the connection that holds a request's agent lock and does its reads and writes (None: the
    sessionmaker's own engine). `worker_id` marks the runs this worker owns, with a lease it keeps renewing
    (`memlet.turns.lifecycle`); None leaves runs ownerless.
    """

    sessionmaker: async_sessionmaker[AsyncSession]
    settings: Settings
    # `async with llm_for(llm_config, org_id) as llm`: the client is kept open for the block.
    llm_for: Callable[[dict[str, Any], str], AbstractAsyncContextManager[LLMClient]]
    turn_engine: AsyncEngine | None = None
    worker_id: str | None = None
    # Embeddings for the archival tools; one of its own when the app gives none (tests, scripts).
    embedder: Embedder | None = None
    # Runs another agent's turn for the multi-agent tools (None: those tools answer with an error).
    agent_messenger: AgentMessenger | None = None
    # The process' in-context rows kept between turns (None: every turn reads its whole window).
    window_cache: WindowCache | None = None
    # The pool's sessionmaker while `sessionmaker` is bound to a turn's locked connection (None: it is the pool's):
    # tools run side by side take their sessions from it.
    pooled_sessionmaker: async_sessionmaker[AsyncSession] | None = None

    def __post_init__(self) -> None:
        if self.embedder is None:
            self.embedder = Embedder(self.settings, self.sessionmaker)


@dataclass
class RunOptions:
    """Per-request knobs.

    `override_model` is the raw handle from the request; the loop cannot resolve handles (the model catalog
    lives on the app), so it is only recorded. The HTTP layer honours it by resolving the handle and passing
    the resulting llm_config fields as `llm_config_override`: they replace the agent's llm_config fields for
    this request only (model, endpoint, context window...) and are never written back to the agent.
    """

    max_steps: int = 50
    stream_tokens: bool = False
    # Whether a V2 agent's streamed `send_message` fragments show as assistant text (Letta's `use_assistant_message`;
    # off, they stream as the call's own fragments, as any other call's).
    use_assistant_message: bool = True
    # A blocking send (a LettaResponse, an async run or a batch item), not a stream: a V2 agent's last allowed
    # step then stops with max_steps whatever the model asked, as Letta's V2 `step()` does.
    blocking: bool = False
    override_model: str | None = None
    llm_config_override: dict[str, Any] | None = None
    client_tools: list[dict[str, Any]] = field(default_factory=list)
    # Skills the client can load ({name, description, location}): listed in this request's system prompt only.
    client_skills: list[dict[str, Any]] = field(default_factory=list)
    # The request's system prompt in place of the stored one, for this request's LLM calls only (Letta's
    # `override_system`, alias `system`).
    override_system: str | None = None
    # Stream a compaction as an event_message plus a summary_message (Letta Code asks for it) instead of a
    # user_message; the summary is then stored with the `summary` role, as Letta does.
    include_compaction_messages: bool = False
    run_metadata: dict[str, Any] | None = None
    request_config: dict[str, Any] | None = None
    background: bool = False
    # The requesting user's id, sent as an OpenAI-compatible request's `user` (as Letta's OpenAI client sends it).
    user_id: str | None = None
    # Run the turn in this conversation (its window, system message and isolated blocks); None: the agent's own.
    conversation_id: str | None = None
    # How long to wait for the agent's lock before AgentBusyError (None: settings.agent_lock_timeout_s).
    lock_wait_s: float | None = None
    # Awaited once the request holds the agent's lock and its run is running (before the first LLM call).
    on_started: Callable[[], Awaitable[None]] | None = None
    # A turn another agent's multi-agent tool started: the agents waiting on it, outermost first.
    agent_chain: tuple[str, ...] = ()
    # Awaited inside the transaction that closes a run ending normally (`OnFinish`).
    on_finish: OnFinish | None = None


def default_llm_for(settings: Settings, sessionmaker: async_sessionmaker[AsyncSession]) -> LLMClients:
    """The production factory: `async with llm_for(llm_config, org_id) as llm` (see `memlet.loop.llm_clients`)."""
    return LLMClients(settings, sessionmaker)
