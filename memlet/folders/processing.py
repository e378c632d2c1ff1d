"""Background processing of uploaded files: parse → file blocks → chunk → embed → completed (or error).

Each stage is committed before the next, so `processing_status` always says how far a file got (an upload
is stored at `parsing`, as Letta answers it; `pending` is only a legacy starting point):

    parsing --text stored, file blocks added--> embedding --passages stored--> completed
          (any failure: error, with error_message; a file of only whitespace fails after its text is shown)

A failed embedding is tried once more, as Letta did it: the text split again with the fallback sizes (384-token
chunks, 25 of overlap, whatever the file type) and embedded afresh; `total_chunks` keeps the first count.

`recover()` runs at start-up and resubmits every file still pending, parsing or embedding: its uploaded bytes
(or its parsed text) are still stored, and a restarted embedding first deletes the passages it had written, so a
file is never stuck and never half-embedded twice. A Postgres advisory lock per file keeps two server processes
from working on the same file.
"""

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from memlet import ids
from memlet.actor import Actor
from memlet.db import models as orm
from memlet.errors import MemletError
from memlet.folders.agent_files import AgentFiles
from memlet.folders.chunking import chunk_file, fallback_chunks
from memlet.folders.file_repository import FileRepository
from memlet.folders.parsing import ChildLimits, ParseError, parse_file, run_in_child
from memlet.folders.repository import FolderRepository
from memlet.llm.wire_errors import ProviderHTTPError
from memlet.passages.embedder import Embedder
from memlet.passages.service import PassageService
from memlet.prompt.rebuild import PromptRebuilder

log = logging.getLogger(__name__)
NO_CHUNKS = "No chunks created from text with default chunker"  # Letta's error for a file of only whitespace
# Chunks per embedding request (and per committed round): the folder's `embedding_config.batch_size`, as Letta's
# file embedder sends them, within the 1..2,048 inputs OpenAI takes in one request.
DEFAULT_EMBED_BATCH = 32
MAX_EMBED_BATCH = 2048
# Texts up to this many characters are split in a thread of this process (well under a second); longer ones in a
# capped child process (memlet/folders/file_worker.py), so seconds of splitting never hold the interpreter lock
# that this process's requests need.
SPLIT_IN_PROCESS_CHARS = 64_000


async def split_text(
    text: str, media_type: str | None, chunk_size: Any, limits: ChildLimits, *, fallback: bool = False
) -> list[str]:
    """`chunk_file` (or, with `fallback`, `fallback_chunks`) of `text`, in a thread or a child process by its size."""
    if len(text) <= SPLIT_IN_PROCESS_CHARS:
        if fallback:
            return await asyncio.to_thread(fallback_chunks, text)
        return await asyncio.to_thread(chunk_file, text, media_type, chunk_size)
    job = {"text": text, "media_type": media_type, "chunk_size": chunk_size, "fallback": fallback}
    chunks: list[str] = json.loads(await run_in_child("chunks", json.dumps(job).encode(), limits))
    return chunks


def embed_batch_size(config: dict[str, Any] | None) -> int:
    """The chunks sent in one embedding request for a folder with this embedding_config."""
    given = (config or {}).get("batch_size")
    size = given if isinstance(given, int) and not isinstance(given, bool) and given > 0 else DEFAULT_EMBED_BATCH
    return min(size, MAX_EMBED_BATCH)


class FileProcessor:
    """Runs file processing as background tasks of this process, at most `concurrency` at once."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        embedder: Embedder | None,
        rebuild_prompts: PromptRebuilder,
        concurrency: int = 2,
        child_limits: ChildLimits = ChildLimits(),
    ) -> None:
        self.sessionmaker = sessionmaker
        self.child_limits = child_limits
        self.rebuild_prompts = rebuild_prompts
        self.embedder = embedder
        self.slots = asyncio.Semaphore(max(1, concurrency))
        self.tasks: set[asyncio.Task[None]] = set()

    async def submit(self, file_id: str) -> None:
        """Start processing `file_id` in the background (returns at once)."""
        task = asyncio.create_task(self._guarded(file_id), name=f"file:{file_id}")
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def recover(self) -> list[str]:
        """Resubmit every unfinished file (at start-up); returns their ids."""
        async with self.sessionmaker() as session:
            file_ids = await FileRepository(session).unfinished_ids()
        for file_id in file_ids:
            await self.submit(file_id)
        return file_ids

    async def drain(self) -> None:
        """Wait for the submitted files (tests, and a graceful stop that wants them finished)."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)

    async def shutdown(self) -> None:
        """Stop: unfinished files keep their status and are picked up again at the next start."""
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*list(self.tasks), return_exceptions=True)

    async def _guarded(self, file_id: str) -> None:
        async with self.slots, self.sessionmaker() as lock_session:
            key = func.hashtextextended(f"memlet-file:{file_id}", 0)
            if not await lock_session.scalar(select(func.pg_try_advisory_lock(key))):
                return  # another process has it
            try:
                await self.process(file_id)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the file must end in error, never stay "in progress" in this process
                log.exception("file processing failed")
                await self._fail(file_id, exc)
            finally:
                await lock_session.scalar(select(func.pg_advisory_unlock(key)))

    async def process(self, file_id: str) -> None:
        async with self.sessionmaker() as session:
            row = await session.get(orm.FileMetadata, file_id)
            content = await FileRepository(session).content(file_id)
            folder = await session.get(orm.Source, row.source_id) if row is not None else None
        if row is None or folder is None or content is None or row.processing_status in ("completed", "error"):
            return
        actor = Actor(row.created_by_id or ids.DEFAULT_USER_ID, row.organization_id)
        text = content.text
        if text is None or row.processing_status in ("pending", "parsing"):
            if not await self._move(file_id, "parsing"):
                return
            if content.raw is None:
                raise ParseError("The uploaded bytes are gone; upload the file again")
            text = await parse_file(content.raw, row.file_type or "text/plain", self.child_limits)
            if not await self._store_text(row, text):
                return
        chunk_size = (folder.embedding_config or {}).get("embedding_chunk_size")
        chunks = await split_text(text, row.file_type, chunk_size, self.child_limits)
        if not chunks:  # blank text: Letta's chunkers found nothing, after the file was shown to agents
            raise ParseError(NO_CHUNKS)
        # An empty file counts as one empty chunk; empty chunks count but are not embedded (Letta's numbers).
        total = len(chunks) or 1
        chunks = [chunk for chunk in chunks if chunk.strip()]
        if not await self._move(file_id, "embedding", total_chunks=total, chunks_embedded=0):
            return
        try:
            await self._embed(actor, row, folder.embedding_config, chunks)
        except Exception:  # Letta split the text once more with its fallback sizes and embedded that instead
            log.warning("embedding a file failed; retrying with the fallback chunks", exc_info=True)
            fallback = await split_text(text, row.file_type, chunk_size, self.child_limits, fallback=True)
            chunks = [chunk for chunk in fallback if chunk.strip()]
            await self._embed(actor, row, folder.embedding_config, chunks)
        async with self.sessionmaker() as session, session.begin():
            repo = FileRepository(session)
            if await repo.move(file_id, "completed", chunks_embedded=len(chunks)):
                await repo.drop_raw(file_id)

    async def _move(self, file_id: str, status: str, **fields: Any) -> bool:
        async with self.sessionmaker() as session, session.begin():
            return await FileRepository(session).move(file_id, status, **fields)

    async def _store_text(self, row: orm.FileMetadata, text: str) -> bool:
        """Keep the parsed text and show the file to every agent of its folder (opened under their caps); False
        when the file is gone (deleted or replaced meanwhile).

        The file's row is locked first, as a delete (or a replace) takes it: a delete waits for this transaction,
        or this one for the delete, instead of each holding a row the other needs (its content, then the file)."""
        async with self.sessionmaker() as session, session.begin():
            repo = FileRepository(session)
            if not await repo.lock_key(row.id):
                return False
            await repo.set_text(row.id, text)
            shown = []
            for agent_id in sorted(await FolderRepository(session).agent_ids(row.source_id)):
                agent = await session.get(orm.Agent, agent_id, with_for_update=True)
                if agent is not None:
                    await AgentFiles(session).attach(agent, [row], {row.id: text})
                    shown.append(agent)
            await self.rebuild_prompts(session, shown)
        return True

    async def _embed(self, actor: Actor, row: orm.FileMetadata, config: dict[str, Any], chunks: Sequence[str]) -> None:
        async with self.sessionmaker() as session, session.begin():
            await session.execute(delete(orm.Passage).where(orm.Passage.file_id == row.id))
        size = embed_batch_size(config)
        for start in range(0, len(chunks), size):
            batch = list(chunks[start : start + size])
            async with self.sessionmaker() as session:
                vectors = await PassageService(session, self.embedder).embed(actor, config, batch, batch_size=size)
            async with self.sessionmaker() as session, session.begin():
                session.add_all(
                    orm.Passage(
                        id=ids.new_id(ids.Prefix.PASSAGE),
                        organization_id=row.organization_id,
                        source_id=row.source_id,
                        file_id=row.id,
                        file_name=row.file_name,
                        text=text,
                        embedding=vector,
                        embedding_dim=len(vector) if vector is not None else None,
                        embedding_config=config,
                        metadata_={},
                        created_by_id=row.created_by_id,
                        last_updated_by_id=row.created_by_id,
                    )
                    for text, vector in zip(batch, vectors, strict=True)
                )
                await FileRepository(session).set_progress(row.id, chunks_embedded=start + len(batch))

    async def _fail(self, file_id: str, exc: BaseException) -> None:
        """End the file in error, without the passages of the rounds embedded before the failure (Letta stored a
        file's passages only once all were embedded). A provider's refusal is told in its own words, as Letta's
        file embedder did: ``Error code: <status> - <the provider's message>``."""
        if isinstance(exc.__cause__, ProviderHTTPError):
            message = str(exc.__cause__)
        elif isinstance(exc, MemletError):
            message = exc.message
        else:
            message = str(exc) or f"File processing failed: {type(exc).__name__}"
        try:
            async with self.sessionmaker() as session, session.begin():
                repo = FileRepository(session)
                if await repo.move(file_id, "error", error_message=message[:2000]):
                    await repo.drop_raw(file_id)
                    await session.execute(delete(orm.Passage).where(orm.Passage.file_id == file_id))
        except Exception:
            log.exception("could not record a file's processing error")
