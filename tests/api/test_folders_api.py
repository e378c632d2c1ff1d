"""Folders, uploads and file processing through the official letta-client against the live server."""

import asyncio
import time
from typing import Any

import httpx
import pytest
from letta_client import BadRequestError, ConflictError, Letta, NotFoundError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from memlet.config import Settings
from memlet.db.engine import async_url
from tests.conftest import LiveServer
from tests.mock_llm import MockLLM, Reply
from tests.pdf_files import pdf_document

MODEL = "openai/gpt-4o-mini"
EMBEDDING = "openai/text-embedding-3-small"
NOTES = "Deploy checklist\nThe launch code is PELICAN-42.\nRoll back with the blue switch.\n"


def pdf_bytes(line: str) -> bytes:
    """A minimal one-page PDF whose text is `line` (hand-written objects, offsets computed)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({line}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    return pdf_document(objects)


def wait_done(client: Letta, folder_id: str, file_id: str, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        found = client.folders.files.retrieve(file_id, folder_id=folder_id)
        if found.processing_status in ("completed", "error") or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def passages(http: httpx.Client, folder_id: str) -> list[dict[str, Any]]:
    response = http.get(f"/v1/folders/{folder_id}/passages")
    assert response.status_code == 200
    return response.json()  # type: ignore[no-any-return]


def make_folder(client: Letta, name: str = "docs") -> Any:
    return client.folders.create(name=name, embedding=EMBEDDING, description="Team docs", instructions="Cite files")


class TestFolderCrud:
    def test_create_read_update_count_metadata_delete(self, client: Letta, http: httpx.Client) -> None:
        folder = make_folder(client)
        assert folder.id.startswith("source-") and folder.embedding_config.embedding_model == "text-embedding-3-small"
        assert folder.embedding_config.embedding_chunk_size == 300
        assert client.folders.retrieve(folder.id).name == "docs"
        assert [f.id for f in client.folders.list(name="docs")] == [folder.id]
        assert http.get("/v1/folders/count").json() == 1
        with pytest.raises(ConflictError):
            make_folder(client)
        updated = client.folders.update(folder.id, description="New", metadata={"team": "ops"})
        assert updated.description == "New" and updated.metadata == {"team": "ops"}
        uploaded = client.folders.files.upload(folder.id, file=("a.txt", b"hello", "text/plain"))
        assert wait_done(client, folder.id, uploaded.id).processing_status == "completed"
        stats = http.get("/v1/folders/metadata?include_detailed_per_source_metadata=true").json()
        assert (stats["total_sources"], stats["total_files"], stats["total_size"]) == (1, 1, 5)
        assert stats["sources"][0]["files"][0]["file_name"] == "docs/a.txt"
        client.folders.delete(folder.id)
        with pytest.raises(NotFoundError):
            client.folders.retrieve(folder.id)
        assert http.get("/v1/folders/count").json() == 0

    def test_by_name_and_sources_alias(self, client: Letta, http: httpx.Client) -> None:
        folder = make_folder(client)
        assert http.get("/v1/folders/name/docs").json() == folder.id
        assert http.get("/v1/folders/name/nope").status_code == 404
        source = http.get(f"/v1/sources/{folder.id}").json()
        assert source["name"] == "docs" and source["vector_db_provider"] == "native"
        assert http.get("/v1/sources/count").json() == 1
        assert http.post("/v1/folders/", json={"name": "bare"}).status_code == 400  # no embedding


class TestUpload:
    def test_text_and_pdf_are_processed_into_passages(self, client: Letta, http: httpx.Client) -> None:
        folder = make_folder(client)
        note = client.folders.files.upload(folder.id, file=("notes.txt", NOTES.encode(), "text/plain"))
        assert note.processing_status == "parsing" and note.file_name == "docs/notes.txt"
        pdf = client.folders.files.upload(folder.id, file=("../../etc/report.pdf", pdf_bytes("Quarterly revenue grew")))
        assert pdf.original_file_name == "report.pdf" and pdf.file_type == "application/pdf"
        done = wait_done(client, folder.id, note.id)
        assert done.processing_status == "completed" and done.total_chunks == done.chunks_embedded == 1
        pdf_done = wait_done(client, folder.id, pdf.id)
        assert pdf_done.processing_status == "completed", pdf_done.error_message
        content = client.folders.files.retrieve(pdf.id, folder_id=folder.id, include_content=True).content
        assert "Quarterly revenue grew" in (content or "")
        found = passages(http, folder.id)
        assert {p["file_id"] for p in found} == {note.id, pdf.id}
        assert any("PELICAN-42" in p["text"] for p in found) and all(p["source_id"] == folder.id for p in found)
        assert [f.file_name for f in client.folders.files.list(folder.id)] == ["report.pdf", "notes.txt"]

    def test_sources_list_oldest_first_and_folders_newest_first(self, client: Letta, http: httpx.Client) -> None:
        folder = make_folder(client)
        names = ["one.txt", "two.txt", "three.txt"]
        for name in names:
            uploaded = client.folders.files.upload(folder.id, file=(name, f"{name} body.".encode(), "text/plain"))
            assert wait_done(client, folder.id, uploaded.id).processing_status == "completed"
        listed = [f["original_file_name"] for f in http.get(f"/v1/folders/{folder.id}/files").json()]
        assert listed == names[::-1]
        assert [f["original_file_name"] for f in http.get(f"/v1/sources/{folder.id}/files").json()] == names
        chunks = [p["text"] for p in http.get(f"/v1/sources/{folder.id}/passages").json()]
        assert chunks == [f"{name} body." for name in names]
        assert [p["text"] for p in passages(http, folder.id)] == chunks[::-1]

    def test_bad_uploads_give_4xx_and_leave_nothing(self, client: Letta, http: httpx.Client) -> None:
        folder = make_folder(client)
        url = f"/v1/folders/{folder.id}/upload"
        assert http.post(url, files={"file": ("x.exe", b"MZ\x90", "application/octet-stream")}).status_code == 415
        assert http.post(url, files={"file": (".env", b"A=1", "text/plain")}).status_code == 400
        assert http.post(url, data={"x": "1"}).status_code in (400, 422)
        assert list(client.folders.files.list(folder.id)) == []

    def test_size_limit_is_413_while_streaming(self, settings: Settings, client: Letta) -> None:
        folder = make_folder(client)
        small = LiveServer(settings.model_copy(update={"max_upload_bytes": 1024})).start()
        try:

            def chunks() -> Any:
                yield b'--b\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n\r\n'
                for _ in range(64):
                    yield b"x" * 1024

            headers = {"content-type": "multipart/form-data; boundary=b"}
            with httpx.Client(base_url=small.base_url, timeout=30) as http:
                response = http.post(f"/v1/folders/{folder.id}/upload", content=chunks(), headers=headers)
                assert response.status_code == 413
                big = {"file": ("big.txt", b"y" * 2048, "text/plain")}
                assert http.post(f"/v1/folders/{folder.id}/upload", files=big).status_code == 413
        finally:
            small.stop()
        assert list(client.folders.files.list(folder.id)) == []

    def test_duplicate_handling(self, client: Letta, http: httpx.Client) -> None:
        folder = make_folder(client)
        first = client.folders.files.upload(folder.id, file=("a.txt", b"one", "text/plain"))
        second = client.folders.files.upload(folder.id, file=("a.txt", b"two", "text/plain"))
        assert second.file_name == "docs/a_(1).txt"
        with pytest.raises(BadRequestError):
            client.folders.files.upload(folder.id, file=("a.txt", b"3", "text/plain"), duplicate_handling="error")
        skipped = http.post(
            f"/v1/folders/{folder.id}/upload?duplicate_handling=skip", files={"file": ("a.txt", b"4", "text/plain")}
        )
        assert skipped.headers["x-upload-result"] == "skipped" and skipped.json()["id"] == first.id
        replaced = client.folders.files.upload(
            folder.id, file=("a.txt", b"five", "text/plain"), duplicate_handling="replace"
        )
        ids = {f.id for f in client.folders.files.list(folder.id)}
        assert first.id not in ids and replaced.id in ids and len(ids) == 2
        client.folders.files.delete(replaced.id, folder_id=folder.id)
        assert {f.id for f in client.folders.files.list(folder.id)} == {second.id}


class TestAgentFiles:
    def _setup(self, client: Letta) -> tuple[Any, Any, Any]:
        folder = make_folder(client)
        note = client.folders.files.upload(folder.id, file=("notes.txt", NOTES.encode(), "text/plain"))
        assert wait_done(client, folder.id, note.id).processing_status == "completed"
        agent = client.agents.create(name="reader", model=MODEL, embedding=EMBEDDING)
        client.agents.folders.attach(folder.id, agent_id=agent.id)
        return folder, note, agent

    def test_agent_state_sources_are_the_attached_folders(self, client: Letta) -> None:
        folder, _note, agent = self._setup(client)
        second = make_folder(client, name="more")
        client.agents.folders.attach(second.id, agent_id=agent.id)
        # letta-client 1.x gets relationships only when it names them, as from Letta.
        assert client.agents.retrieve(agent.id).sources == []
        state = client.agents.retrieve(agent.id, include=["agent.sources"])
        assert [s.id for s in state.sources] == [folder.id, second.id]
        assert state.sources[0].name == "docs" and state.sources[0].instructions == "Cite files"
        assert state.sources[0].embedding_config.embedding_model == "text-embedding-3-small"
        listed = next(a for a in client.agents.list(include=["agent.sources"]) if a.id == agent.id)
        assert [s.id for s in listed.sources] == [folder.id, second.id]
        client.agents.folders.detach(folder.id, agent_id=agent.id)
        assert [s.id for s in client.agents.retrieve(agent.id, include=["agent.sources"]).sources] == [second.id]

    def test_attach_shows_file_block_and_tools(self, client: Letta, mock_llm: MockLLM) -> None:
        folder, _note, agent = self._setup(client)
        tools = {t.name for t in client.agents.tools.list(agent.id)}
        assert {"open_files", "grep_files", "semantic_search_files"} <= tools
        assert [f.id for f in client.agents.folders.list(agent.id)] == [folder.id]
        files = client.agents.files.list(agent.id)
        assert files.files[0].is_open and files.files[0].folder_name == "docs"
        mock_llm.reset()
        mock_llm.script(Reply.text("ok"))
        client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
        system = mock_llm.requests[-1]["messages"][0]["content"]
        assert '<directory name="docs">' in system and "<instructions>Cite files</instructions>" in system
        assert '<file status="open" name="docs/notes.txt">' in system and "2: The launch code is PELICAN-42." in system
        assert client.agents.files.close_all(agent.id) == ["docs/notes.txt"]
        client.agents.folders.detach(folder.id, agent_id=agent.id)
        assert not {"open_files", "grep_files"} & {t.name for t in client.agents.tools.list(agent.id)}
        assert client.agents.files.list(agent.id).files == []

    def test_folders_named_at_create_and_update_are_attached_with_their_files(
        self, client: Letta, mock_llm: MockLLM
    ) -> None:
        folder = make_folder(client)
        note = client.folders.files.upload(folder.id, file=("notes.txt", NOTES.encode(), "text/plain"))
        assert wait_done(client, folder.id, note.id).processing_status == "completed"
        second = make_folder(client, name="more")
        agent = client.agents.create(name="reader", model=MODEL, embedding=EMBEDDING, folder_ids=[folder.id])
        assert [s.id for s in agent.sources] == [folder.id]  # the create response shows it
        assert [b.label for b in agent.memory.file_blocks] == ["docs/notes.txt"]
        assert {"open_files", "grep_files", "semantic_search_files"} <= {t.name for t in agent.tools}
        mock_llm.reset()
        mock_llm.script(Reply.text("ok"))
        client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
        assert "2: The launch code is PELICAN-42." in mock_llm.requests[-1]["messages"][0]["content"]

        # A PATCH makes the list the agent's folders: the deprecated source_ids too.
        updated = client.agents.update(agent.id, source_ids=[second.id])
        assert [s.id for s in updated.sources] == [second.id] and updated.memory.file_blocks == []
        assert client.agents.files.list(agent.id).files == []
        updated = client.agents.update(agent.id, folder_ids=[second.id, folder.id])
        assert sorted(s.id for s in updated.sources) == sorted([folder.id, second.id])
        assert [b.label for b in updated.memory.file_blocks] == ["docs/notes.txt"]
        emptied = client.agents.update(agent.id, folder_ids=[])
        assert emptied.sources == [] and not {"open_files", "grep_files"} & {t.name for t in emptied.tools}
        # An unknown folder is a 404 and creates nothing.
        missing = "source-00000000-0000-4000-8000-000000000000"
        with pytest.raises(NotFoundError):
            client.agents.create(name="ghost", model=MODEL, embedding=EMBEDDING, folder_ids=[missing])
        assert [a.name for a in client.agents.list(name="ghost")] == []

    def test_memory_shows_each_file_as_a_read_only_block(self, client: Letta, http: httpx.Client) -> None:
        _folder, note, agent = self._setup(client)
        client.agents.update(agent.id, per_file_view_window_char_limit=110)
        state = client.agents.retrieve(agent.id, include=["agent.blocks"])
        (block,) = state.memory.file_blocks
        assert (block.label, block.file_id, block.is_open, block.read_only) == ("docs/notes.txt", note.id, True, True)
        assert block.limit == 110 and len(block.value) == 110  # the 125-character view, cut to the limit
        assert block.value.startswith("[Viewing file")
        assert block.value.endswith(
            "...[TRUNCATED]\n# NOTE: This file view is truncated; open the file with an offset to see the rest."
        )
        # The deprecated core-memory view and a listing with blocks show the same; without blocks there are none.
        memory = http.get(f"/v1/agents/{agent.id}/core-memory").json()
        assert [(b["label"], b["value"]) for b in memory["file_blocks"]] == [(block.label, block.value)]
        (listed,) = client.agents.list(include=["agent.blocks"]).items
        assert [b.label for b in listed.memory.file_blocks] == ["docs/notes.txt"]
        assert client.agents.retrieve(agent.id, include=["agent.tools"]).memory.file_blocks == []
        # A closed file keeps its block, empty.
        client.agents.files.close(note.id, agent_id=agent.id)
        (closed,) = client.agents.retrieve(agent.id, include=["agent.blocks"]).memory.file_blocks
        assert (closed.label, closed.is_open, closed.value) == ("docs/notes.txt", False, "")

    def test_open_grep_search_through_tools(self, client: Letta, mock_llm: MockLLM) -> None:
        _folder, note, agent = self._setup(client)
        client.agents.files.close(note.id, agent_id=agent.id)
        mock_llm.reset()
        mock_llm.script(
            Reply.tool_call("grep_files", {"pattern": "pelican"}),
            Reply.tool_call(
                "open_files", {"file_requests": [{"file_name": "docs/notes.txt", "offset": 1, "length": 1}]}
            ),
            Reply.tool_call("semantic_search_files", {"query": "launch code"}),
            Reply.text("done"),
        )
        response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "find it"}])
        returns = [m.tool_return for m in response.messages if m.message_type == "tool_return_message"]
        assert returns[0].startswith("Found 1 total matches across 1 files") and "> 2: The launch code" in returns[0]
        assert returns[1] == "* Opened docs/notes.txt (lines 2-2)"
        assert returns[2].startswith("Found 1 semantic matches in 1 file for query: 'launch code'")
        assert "PELICAN-42" in returns[2]
        opened = client.agents.files.list(agent.id, is_open=True).files[0]
        assert opened.start_line == 2 and "[Viewing lines 2 to 2 (out of 3 lines)]" in (opened.visible_content or "")
        system = mock_llm.requests[-1]["messages"][0]["content"]
        assert "2: The launch code is PELICAN-42." in system and "1: Deploy checklist" not in system

    def test_deleting_a_file_removes_passages_and_blocks(self, client: Letta, http: httpx.Client) -> None:
        folder, note, agent = self._setup(client)
        client.folders.files.delete(note.id, folder_id=folder.id)
        assert passages(http, folder.id) == []
        assert client.agents.files.list(agent.id).files == []


class TestRestart:
    def test_file_left_embedding_is_completed_at_start(
        self, client: Letta, http: httpx.Client, settings: Settings, pg_uri: str
    ) -> None:
        folder = make_folder(client)
        file_id = "file-00000000-0000-4000-8000-00000000abcd"

        async def plant() -> None:
            engine = create_async_engine(async_url(pg_uri))
            async with engine.begin() as conn:
                await conn.execute(
                    text(
                        "INSERT INTO files (id, source_id, file_name, original_file_name, file_type, file_size, "
                        "processing_status, total_chunks, chunks_embedded, organization_id) VALUES (:id, :src, "
                        "'docs/left.txt', 'left.txt', 'text/plain', 10, 'embedding', 1, 0, "
                        "'org-00000000-0000-4000-8000-000000000000')"
                    ),
                    {"id": file_id, "src": folder.id},
                )
                await conn.execute(
                    text("INSERT INTO file_contents (file_id, text) VALUES (:id, 'left behind mid-embedding')"),
                    {"id": file_id},
                )
            await engine.dispose()

        asyncio.run(plant())
        restarted = LiveServer(settings).start()  # its start-up recovers unfinished files
        try:
            done = wait_done(client, folder.id, file_id)
        finally:
            restarted.stop()
        assert done.processing_status == "completed" and done.chunks_embedded == 1
        assert [p["text"] for p in passages(http, folder.id)] == ["left behind mid-embedding"]
