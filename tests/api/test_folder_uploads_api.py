"""Uploads as Letta 0.16.8 stores them: the media type, the text kept, empty files, and the agent's view."""

import json

import httpx
from letta_client import Letta

from tests.api.agent_files_support import import_bytes, raw
from tests.api.test_folders_api import EMBEDDING, MODEL, make_folder, wait_done

GUIDE = b"# Guide\nFirst step. Second step.\n"


class TestMediaType:
    def test_markdown_is_stored_as_x_markdown_and_shown_in_lines(self, client: Letta) -> None:
        folder = make_folder(client)
        guide = client.folders.files.upload(folder.id, file=("guide.md", GUIDE, "text/markdown"))
        assert guide.file_type == "text/x-markdown"
        assert wait_done(client, folder.id, guide.id).processing_status == "completed"
        agent = client.agents.create(name="reader", model=MODEL, embedding=EMBEDDING)
        client.agents.folders.attach(folder.id, agent_id=agent.id)
        (opened,) = client.agents.files.list(agent.id).files
        assert (opened.visible_content or "").splitlines() == [
            "[Viewing file start (out of 2 lines)]",
            "1: # Guide",
            "2: First step. Second step.",
        ]

    def test_an_imported_x_markdown_file_is_viewed_as_in_the_agent_file(self, client: Letta) -> None:
        name = "test_agent_with_files_and_sources.af"
        (agent_id,) = import_bytes(client, raw(name), model=MODEL, x_override_embedding_model=EMBEDDING)
        (exported,) = [f for f in json.loads(raw(name))["agents"][0]["files_agents"] if f["file_name"].endswith(".md")]
        (opened,) = [f for f in client.agents.files.list(agent_id).files if f.file_name.endswith(".md")]
        expected = exported["visible_content"].splitlines()
        assert (opened.visible_content or "").splitlines() == expected
        assert expected[0] == "[Viewing file start (out of 138 lines)]"

    def test_the_name_decides_and_a_supported_declared_type_admits_any_name(self, client: Letta) -> None:
        folder = make_folder(client)
        uploads = [
            ("long.markdown", "text/plain", "text/markdown"),
            ("rows.jsonl", "application/jsonl", "application/x-jsonlines"),
            ("feed.xml", "application/octet-stream", "text/xml"),
            ("README", "text/plain", "text/plain"),
        ]
        for name, declared, stored in uploads:
            uploaded = client.folders.files.upload(folder.id, file=(name, b"<a>1</a>", declared))
            assert uploaded.file_type == stored
            assert wait_done(client, folder.id, uploaded.id).processing_status == "completed"

    def test_an_unlisted_declared_type_is_refused_without_a_known_name(self, client: Letta, http: httpx.Client) -> None:
        folder = make_folder(client)
        refused = http.post(
            f"/v1/folders/{folder.id}/upload", files={"file": ("config", b"a: 1", "application/x-yaml")}
        )
        assert refused.status_code == 415
        assert refused.json()["detail"].startswith("Unsupported file type: unknown (filename: config).")


class TestParsedText:
    def test_html_keeps_its_markup(self, client: Letta) -> None:
        page = b"<html>\n  <body><p>Hello <b>world</b></p>\n    <script>track()</script>\n  </body>\n</html>\n"
        folder = make_folder(client)
        uploaded = client.folders.files.upload(folder.id, file=("page.html", page, "text/html"))
        assert wait_done(client, folder.id, uploaded.id).processing_status == "completed"
        stored = client.folders.files.retrieve(uploaded.id, folder_id=folder.id, include_content=True)
        assert stored.content == page.decode()

    def test_a_file_of_whitespace_is_accepted_and_ends_in_error(self, client: Letta) -> None:
        folder = make_folder(client)
        blank = client.folders.files.upload(folder.id, file=("blank.txt", b"  \n\t\n", "text/plain"))
        assert blank.file_size == 5
        done = wait_done(client, folder.id, blank.id)
        assert done.processing_status == "error" and done.error_message
        assert [f.id for f in client.folders.files.list(folder.id)] == [blank.id]
