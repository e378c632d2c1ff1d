"""Small wire details of archives and agent files, as Letta 0.16.8 answers them."""

import httpx
from letta_client import Letta

from tests.api.test_folders_api import EMBEDDING, MODEL, NOTES, make_folder, wait_done


class TestArchives:
    def test_metadata_is_null_and_deletes_answer_204(self, client: Letta, http: httpx.Client) -> None:
        archive = client.archives.create(name="facts", embedding=EMBEDDING)
        assert archive.metadata is None
        assert http.get(f"/v1/archives/{archive.id}").json()["metadata"] is None
        passage = client.archives.passages.create(archive.id, text="water boils at 100 C")
        deleted = http.delete(f"/v1/archives/{archive.id}/passages/{passage.id}")
        assert (deleted.status_code, deleted.content) == (204, b"")
        deleted = http.delete(f"/v1/archives/{archive.id}")
        assert (deleted.status_code, deleted.content) == (204, b"")
        assert http.get(f"/v1/archives/{archive.id}").status_code == 404


class TestAgentFiles:
    def _agent_with_file(self, client: Letta) -> tuple[str, str]:
        folder = make_folder(client)
        note = client.folders.files.upload(folder.id, file=("notes.txt", NOTES.encode(), "text/plain"))
        assert wait_done(client, folder.id, note.id).processing_status == "completed"
        agent = client.agents.create(name="reader", model=MODEL, embedding=EMBEDDING)
        client.agents.folders.attach(folder.id, agent_id=agent.id)
        return agent.id, note.id

    def test_next_cursor_is_the_last_row_even_on_the_last_page(self, client: Letta) -> None:
        agent_id, _note_id = self._agent_with_file(client)
        page = client.agents.files.list(agent_id)
        assert page.has_more is False and page.next_cursor == page.files[-1].id
        assert client.agents.files.list(agent_id, after=page.next_cursor).next_cursor is None

    def test_closing_keeps_the_last_view_on_the_row(self, client: Letta) -> None:
        agent_id, note_id = self._agent_with_file(client)
        (opened,) = client.agents.files.list(agent_id).files
        assert opened.is_open and opened.visible_content
        client.agents.files.close(note_id, agent_id=agent_id)
        (closed,) = client.agents.files.list(agent_id).files
        assert not closed.is_open and closed.visible_content == opened.visible_content
        (block,) = client.agents.retrieve(agent_id, include=["agent.blocks"]).memory.file_blocks
        assert block.value == ""  # the agent no longer sees it
