"""Folders and their files, after Letta's `tests/test_sources.py` and `tests/managers/test_source_manager.py`:
what a letta-client user sees when uploading, replacing and naming files."""

import asyncio
import contextlib
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from letta_client import Letta

from memlet.folders import processing
from tests.api.test_folders_api import EMBEDDING, MODEL, make_folder, wait_done
from tests.mock_llm import MockLLM, Reply


@pytest.fixture
def paused_file_blocks(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[threading.Event, threading.Event]]:
    """Hold the file processor just before it adds a parsed file's blocks to the folder's agents (its text is
    stored by then): `reached` is set when it gets there, and it goes on once `release` is set."""
    reached, release = threading.Event(), threading.Event()
    attach = processing.AgentFiles.attach

    async def held(self: Any, agent: Any, files: Any, texts: Any) -> list[str]:
        reached.set()
        await asyncio.to_thread(release.wait, 30)
        return await attach(self, agent, files, texts)

    monkeypatch.setattr(processing.AgentFiles, "attach", held)
    yield reached, release
    release.set()


def while_held(release: threading.Event, request: Callable[[], httpx.Response]) -> httpx.Response:
    """Send `request` while the processor is held, give it time to reach the database, then let the processor go."""
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(request)
        with contextlib.suppress(TimeoutError):
            pending.result(timeout=0.5)  # it waits for the processor (or fails at once)
        release.set()
        return pending.result(timeout=30)


class TestReplaceWhileProcessing:
    def test_a_replace_during_processing_answers_200_not_a_deadlock_503(
        self, client: Letta, http: httpx.Client, paused_file_blocks: tuple[threading.Event, threading.Event]
    ) -> None:
        reached, release = paused_file_blocks
        folder = make_folder(client)
        agent = client.agents.create(name="reader", model=MODEL, embedding=EMBEDDING)
        client.agents.folders.attach(folder.id, agent_id=agent.id)
        first = client.folders.files.upload(folder.id, file=("notes.txt", b"old words", "text/plain"))
        assert reached.wait(10), "the upload was never processed"
        response = while_held(
            release,
            lambda: http.post(
                f"/v1/folders/{folder.id}/upload",
                params={"duplicate_handling": "replace"},
                files={"file": ("notes.txt", b"new words", "text/plain")},
            ),
        )
        assert response.status_code == 200, response.text
        replaced = response.json()
        assert replaced["id"] != first.id
        assert wait_done(client, folder.id, replaced["id"]).processing_status == "completed"
        assert [f.id for f in client.folders.files.list(folder.id)] == [replaced["id"]]
        (block,) = client.agents.retrieve(agent.id, include=["agent.blocks"]).memory.file_blocks
        assert "new words" in block.value

    def test_deleting_the_folder_during_processing_answers_200(
        self, client: Letta, http: httpx.Client, paused_file_blocks: tuple[threading.Event, threading.Event]
    ) -> None:
        reached, release = paused_file_blocks
        folder = make_folder(client)
        agent = client.agents.create(name="reader", model=MODEL, embedding=EMBEDDING)
        client.agents.folders.attach(folder.id, agent_id=agent.id)
        client.folders.files.upload(folder.id, file=("notes.txt", b"old words", "text/plain"))
        assert reached.wait(10), "the upload was never processed"
        response = while_held(release, lambda: http.delete(f"/v1/folders/{folder.id}"))
        assert response.status_code == 200, response.text
        assert client.agents.retrieve(agent.id, include=["agent.blocks"]).memory.file_blocks == []


class TestCustomNames:
    def test_a_custom_name_keeps_its_folders(self, client: Letta, http: httpx.Client, mock_llm: MockLLM) -> None:
        folder = make_folder(client)
        agent = client.agents.create(name="reader", model=MODEL, embedding=EMBEDDING)
        client.agents.folders.attach(folder.id, agent_id=agent.id)
        custom = "folder_a/folder_b/another_custom_name.txt"
        first = client.folders.files.upload(folder.id, file=("tmp1234.txt", b"nested words", "text/plain"), name=custom)
        assert (first.file_name, first.original_file_name) == (f"docs/{custom}", custom)
        assert wait_done(client, folder.id, first.id).processing_status == "completed"
        again = client.folders.files.upload(folder.id, file=("tmp1234.txt", b"more", "text/plain"), name=custom)
        assert again.file_name == "docs/folder_a/folder_b/another_custom_name_(1).txt"
        listed = {f.file_name for f in client.folders.files.list(folder.id)}  # without the folder, as Letta lists
        assert listed == {custom, "folder_a/folder_b/another_custom_name_(1).txt"}
        labels = [b.label for b in client.agents.retrieve(agent.id, include=["agent.blocks"]).memory.file_blocks]
        assert f"docs/{custom}" in labels
        mock_llm.script(Reply.text("ok"))
        client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "hi"}])
        assert f'<file status="open" name="docs/{custom}">' in mock_llm.requests[-1]["messages"][0]["content"]

    def test_an_uploaded_files_own_name_is_still_its_base_name(self, client: Letta, http: httpx.Client) -> None:
        folder = make_folder(client)
        uploaded = client.folders.files.upload(folder.id, file=("../../etc/notes.txt", b"words", "text/plain"))
        assert (uploaded.file_name, uploaded.original_file_name) == ("docs/notes.txt", "notes.txt")
        for bad in ("a/../b.txt", "/", "dir/.hidden"):
            response = http.post(
                f"/v1/folders/{folder.id}/upload", params={"name": bad}, files={"file": ("x.txt", b"x", "text/plain")}
            )
            assert response.status_code == 400, (bad, response.text)


class TestReplace:
    def test_a_replaced_file_keeps_its_folder_in_its_name(self, client: Letta) -> None:
        # memlet's side of a README compatibility note: Letta named the replacement `notes.txt`, without the
        # `docs/` every other upload's name has, so the model saw it (and had to open it) under another name.
        folder = make_folder(client)
        agent = client.agents.create(name="reader", model=MODEL, embedding=EMBEDDING, folder_ids=[folder.id])
        first = client.folders.files.upload(folder.id, file=("notes.txt", b"old words", "text/plain"))
        assert wait_done(client, folder.id, first.id).processing_status == "completed"
        replaced = client.folders.files.upload(
            folder.id, file=("notes.txt", b"new words", "text/plain"), duplicate_handling="replace"
        )
        assert (replaced.file_name, replaced.original_file_name) == ("docs/notes.txt", "notes.txt")
        assert wait_done(client, folder.id, replaced.id).processing_status == "completed"
        (block,) = client.agents.retrieve(agent.id, include=["agent.blocks"]).memory.file_blocks
        assert (block.label, block.file_id) == ("docs/notes.txt", replaced.id)
