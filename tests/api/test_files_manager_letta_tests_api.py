"""What Letta 0.16.8's manager tests (tests/managers: sources, files, passages, archives) pin down, seen through the API."""

import uuid

import httpx
from letta_client import Letta

from tests.api.test_folders_api import EMBEDDING, MODEL, make_folder, wait_done


def unknown(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4()}"


class TestFolderAgents:
    def test_an_agent_cursor_must_name_an_agent(self, client: Letta, http: httpx.Client) -> None:
        folder = make_folder(client)
        agent = client.agents.create(name="reader", model=MODEL, embedding=EMBEDDING)
        client.agents.folders.attach(folder.id, agent_id=agent.id)
        ghost = unknown("agent")
        for cursor in ("after", "before"):
            response = http.get(f"/v1/folders/{folder.id}/agents?{cursor}={ghost}")
            assert (response.status_code, response.json()) == (404, {"detail": f"No Agent found with id {ghost}"})
        # An existing agent that is not attached is a fine cursor.
        other = client.agents.create(name="other", model=MODEL, embedding=EMBEDDING)
        assert http.get(f"/v1/folders/{folder.id}/agents?after={other.id}").json() == [agent.id]


class TestFolderFiles:
    def test_a_file_of_another_folder_is_named_in_the_404(self, client: Letta, http: httpx.Client) -> None:
        docs, other = make_folder(client), make_folder(client, "other")
        note = client.folders.files.upload(docs.id, file=("a.txt", b"alpha", "text/plain"))
        assert wait_done(client, docs.id, note.id).processing_status == "completed"
        response = http.get(f"/v1/folders/{other.id}/files/{note.id}")
        expected = {"detail": f"File with id={note.id} not found in folder {other.id}"}
        assert (response.status_code, response.json()) == (404, expected)
        ghost = unknown("file")
        response = http.get(f"/v1/folders/{docs.id}/files/{ghost}")
        assert (response.status_code, response.json()) == (404, {"detail": f"File with id={ghost} not found"})


class TestArchivePassages:
    def test_deleting_a_passage_of_another_archive_is_a_400(self, client: Letta, http: httpx.Client) -> None:
        facts, notes = (client.archives.create(name=n, embedding=EMBEDDING) for n in ("facts", "notes"))
        passage = client.archives.passages.create(notes.id, text="water boils at 100 C")
        response = http.delete(f"/v1/archives/{facts.id}/passages/{passage.id}")
        expected = {"detail": f"Passage {passage.id} does not belong to archive {facts.id}"}
        assert (response.status_code, response.json()) == (400, expected)
        ghost = unknown("passage")
        assert http.delete(f"/v1/archives/{facts.id}/passages/{ghost}").status_code == 404
        assert http.delete(f"/v1/archives/{notes.id}/passages/{passage.id}").status_code == 204

    def test_an_agent_holds_a_second_archive_beside_its_own(self, client: Letta, http: httpx.Client) -> None:
        agent = client.agents.create(name="keeper", model=MODEL, embedding=EMBEDDING)
        client.agents.passages.create(agent.id, text="the pelican code is 42")
        (own,) = client.archives.list(agent_id=agent.id)
        shared = client.archives.create(name="shared", embedding=EMBEDDING)
        client.archives.passages.create(shared.id, text="the heron code is 7")
        attached = http.patch(f"/v1/agents/{agent.id}/archives/attach/{shared.id}")
        assert attached.status_code == 200  # Letta: 409, one archive per agent
        assert {a.id for a in client.archives.list(agent_id=agent.id)} == {own.id, shared.id}
        found = http.get(f"/v1/agents/{agent.id}/archival-memory/search?query=code").json()
        assert {r["content"] for r in found["results"]} == {"the pelican code is 42", "the heron code is 7"}
        (stored,) = client.agents.passages.create(agent.id, text="the egret code is 9")
        assert stored.archive_id == own.id  # inserts go to the agent's own archive


class TestUploadStatus:
    def test_an_upload_answers_at_parsing_then_completes(self, client: Letta, http: httpx.Client) -> None:
        folder = make_folder(client)
        for route in ("folders", "sources"):
            response = http.post(
                f"/v1/{route}/{folder.id}/upload", files={"file": (f"{route}.txt", b"hi", "text/plain")}
            )
            uploaded = response.json()
            assert (response.status_code, uploaded["processing_status"]) == (200, "parsing")
            done = wait_done(client, folder.id, uploaded["id"])
            assert (done.processing_status, done.total_chunks, done.chunks_embedded) == ("completed", 1, 1)


class TestListCursors:
    def test_a_cursor_that_names_no_row_is_a_404_as_in_letta(self, client: Letta, http: httpx.Client) -> None:
        folder = make_folder(client)
        client.archives.create(name="facts", embedding=EMBEDDING)
        for path, prefix, kind in (
            ("/v1/folders/", "source", "Source"),
            (f"/v1/folders/{folder.id}/files", "file", "FileMetadata"),
            (f"/v1/sources/{folder.id}/files", "file", "FileMetadata"),
            ("/v1/archives/", "archive", "Archive"),
        ):
            ghost = unknown(prefix)
            response = http.get(f"{path}?after={ghost}")
            assert (response.status_code, response.json()) == (404, {"detail": f"No {kind} found with id {ghost}"})
        assert len(http.get("/v1/folders/").json()) == 1

    def test_an_archives_agent_list_ignores_a_cursor_that_names_no_agent(
        self, client: Letta, http: httpx.Client
    ) -> None:
        archive = client.archives.create(name="facts", embedding=EMBEDDING)
        agent = client.agents.create(name="keeper", model=MODEL, embedding=EMBEDDING)
        http.patch(f"/v1/agents/{agent.id}/archives/attach/{archive.id}")
        listed = http.get(f"/v1/archives/{archive.id}/agents?after={unknown('agent')}").json()
        assert [a["id"] for a in listed] == [agent.id]
