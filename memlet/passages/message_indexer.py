"""Background message embedding for hybrid message search (`embed_messages`; off by default).

A send never waits for it: the worker wakes every `message_embedding_interval_s`, takes up to `BATCH` searchable
messages with text and no vector yet (oldest first, after its high-water mark), embeds their text with each
agent's embedding_config (one request per config) and stores the vectors in `message_embeddings`.
The mark only passes messages older than `SETTLE_S`, so a turn that commits after a newer message was indexed is
still picked up, and a batch a provider refused is retried for that long, then skipped (logged), so one broken
config never stalls the others. On start the mark is 0: anything missing is picked up again.
"""

import asyncio
import contextlib
import json
import logging
from collections import defaultdict
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet.db.base import utcnow
from memlet.errors import MemletError
from memlet.messages.embedding_repository import MessageEmbeddingRepository, PendingMessage
from memlet.passages.embedder import Embedder

log = logging.getLogger(__name__)

BATCH = 64
SETTLE_S = 30.0


class MessageIndexer:
    """Embeds new messages in the background; `start()` at boot, `stop()` at shutdown."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], embedder: Embedder, interval_s: float) -> None:
        self.sessionmaker = sessionmaker
        self.embedder = embedder
        self.interval_s = interval_s
        self.mark = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="message-indexer")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            try:
                while await self.index_once() == BATCH:  # a backlog: next batch at once
                    pass
            except Exception:  # a bad tick must not end the worker
                log.exception("message indexer: tick failed")
            await asyncio.sleep(self.interval_s)

    async def index_once(self) -> int:
        """Embed one batch of pending messages; how many were stored."""
        async with self.sessionmaker() as session:
            pending = await MessageEmbeddingRepository(session).pending(self.mark, BATCH)
        if not pending:
            return 0
        groups: dict[str, list[PendingMessage]] = defaultdict(list)
        for message in pending:
            if message.text.strip():
                groups[json.dumps(message.embedding_config, sort_keys=True)].append(message)
        rows = [row for group in groups.values() for row in await self._embed(group)]
        async with self.sessionmaker() as session, session.begin():
            await MessageEmbeddingRepository(session).add_many(rows)
        settled = utcnow() - timedelta(seconds=SETTLE_S)
        self.mark = max([self.mark, *(m.sequence_id for m in pending if m.created_at < settled)])
        return len(rows)

    async def _embed(self, group: list[PendingMessage]) -> list[dict[str, Any]]:
        config = group[0].embedding_config
        try:
            vectors = await self.embedder.embed_texts(config, [m.text for m in group], org_id=group[0].organization_id)
        except MemletError as exc:
            log.warning(
                "message indexer: %d messages not embedded with %s: %s", len(group), config.get("embedding_model"), exc
            )
            return []
        return [
            {
                "message_id": m.id,
                "agent_id": m.agent_id,
                "organization_id": m.organization_id,
                "embedding": vector,
                "embedding_dim": len(vector),
                "embedding_model": str(config.get("embedding_model")),
            }
            for m, vector in zip(group, vectors, strict=True)
            if len(vector) == config.get("embedding_dim")
        ]
