"""Folder files as Letta 0.16.8 shows them: how uploads are chunked (the passages stored, embedded and searched),
the text a PDF gives, and the details of an agent's open files.

Expected chunks were worked out with llama-index's own `SentenceSplitter` / `MarkdownNodeParser` (0.14.10, the
version Letta 0.16.8 locks) on the same texts, and are written here as the sentences they hold."""

from typing import Any

import httpx
from letta_client import Letta

from tests.api.test_folders_api import EMBEDDING, MODEL, make_folder, passages, wait_done
from tests.mock_llm import MockLLM, Reply
from tests.pdf_files import pdf_document

COLORS = ["red", "green", "blue", "amber", "violet"]
# 60 sentences of ~23 tokens. Punkt (untrained, as llama-index builds it) also ends a sentence at "e.g.", so
# "for rack N." is a sentence of its own, and the 50-token overlap carries it into the next chunk.
SENTENCES = [f"Note {i}: the {COLORS[i % 5]} crate holds {i * 7} bolts, e.g. for rack {i % 3}." for i in range(60)]
INVENTORY = " ".join(SENTENCES[:30]) + "\n" + " ".join(SENTENCES[30:]) + "\n"


def joined(first: int, stop: int) -> str:
    """Sentences first..stop-1 as they stand in INVENTORY."""
    return "".join(SENTENCES[i] + ("\n" if i == 29 else " ") for i in range(first, stop)).strip()


def upload(client: Letta, folder_id: str, name: str, body: str, media_type: str) -> Any:
    uploaded = client.folders.files.upload(folder_id, file=(name, body.encode(), media_type))
    return wait_done(client, folder_id, uploaded.id)


def embedded_texts(mock_llm: MockLLM) -> list[str]:
    return [text for request in mock_llm.embedding_requests for text in request["input"]]


class TestChunking:
    def test_text_is_split_into_sentence_chunks_of_300_tokens_with_50_tokens_of_overlap(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        # Letta: SentenceSplitter(chunk_size=embedding_chunk_size (300), chunk_overlap=50) for text, code, CSV, PDF
        folder = make_folder(client)
        expected = [joined(0, 13)] + [
            f"for rack {(first - 1) % 3}. " + joined(first, stop)
            for first, stop in ((11, 24), (22, 35), (33, 46), (44, 57), (55, 60))
        ]
        for name, media_type in (("inventory.txt", "text/plain"), ("inventory.py", "text/x-python")):
            mock_llm.reset()
            done = upload(client, folder.id, name, INVENTORY, media_type)
            assert (done.processing_status, done.total_chunks, done.chunks_embedded) == ("completed", 6, 6)
            assert embedded_texts(mock_llm) == expected
        assert sorted(p["text"] for p in passages(http, folder.id)) == sorted(expected * 2)

    def test_a_failed_embedding_is_tried_once_more_with_the_fallback_chunks(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        # Letta's _chunk_and_embed_with_fallback: any failure → the text split again by SentenceSplitter(384, 25)
        # and embedded; total_chunks keeps the first split's count, chunks_embedded is the second's
        folder = make_folder(client)
        mock_llm.reset()
        mock_llm.script_embeddings(Reply.error(401, message="Incorrect API key provided: sk-mock"))
        done = upload(client, folder.id, "inventory.txt", INVENTORY, "text/plain")
        expected = [joined(0, 17), joined(16, 33), joined(32, 49), joined(48, 60)]
        assert (done.processing_status, done.total_chunks, done.chunks_embedded) == ("completed", 6, 4)
        assert [r["input"] for r in mock_llm.embedding_requests][-1] == expected
        assert sorted(p["text"] for p in passages(http, folder.id)) == sorted(expected)

    def test_markdown_is_split_at_headings_outside_code_fences(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        # Letta: MarkdownNodeParser for text/markdown (a `.markdown` name); a `.md` name is stored as
        # text/x-markdown, which Letta's chunker did not know as Markdown: it went to the sentence splitter
        notes = (
            "Intro line before any heading.\n\n# Setup\nInstall the tool.\n\n```\n# not a heading inside a fence\n"
            "```\n\n## Deploy\nRun it.\n#hashtag is no heading\n"
        )
        folder = make_folder(client)
        mock_llm.reset()
        done = upload(client, folder.id, "notes.markdown", notes, "text/markdown")
        assert (done.file_type, done.total_chunks, done.chunks_embedded) == ("text/markdown", 3, 3)
        assert embedded_texts(mock_llm) == [
            "Intro line before any heading.",
            "# Setup\nInstall the tool.\n\n```\n# not a heading inside a fence\n```",
            "## Deploy\nRun it.\n#hashtag is no heading",
        ]
        mock_llm.reset()
        done = upload(client, folder.id, "notes.md", notes, "text/markdown")
        assert (done.file_type, done.total_chunks, done.chunks_embedded) == ("text/x-markdown", 1, 1)
        assert embedded_texts(mock_llm) == [notes.strip()]

    def test_a_long_json_object_is_split_again_by_sentences(self, client: Letta, mock_llm: MockLLM) -> None:
        # Letta: an object's leaf lines longer than chunk_size characters went through the sentence splitter
        body = '{"inventory": {"notes": "' + " ".join(SENTENCES[:30]) + '"}, "owner": "ops"}'
        folder = make_folder(client)
        mock_llm.reset()
        done = upload(client, folder.id, "inventory.json", body, "application/json")
        expected = [
            "inventory notes " + joined(0, 13),
            "for rack 1. " + joined(11, 24),
            "for rack 0. " + joined(22, 30),
        ]
        expected[-1] += "\nowner ops"
        assert (done.total_chunks, done.chunks_embedded) == (3, 3)
        assert embedded_texts(mock_llm) == expected


def pdf_pages(*pages: list[tuple[int, int, str]]) -> bytes:
    """A PDF of Helvetica text lines, each page a list of (x, y, text); hand-written objects, offsets computed."""
    font = 3 + 2 * len(pages)
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    kids = []
    for lines in pages:
        stream = b"".join(b"BT /F1 12 Tf %d %d Td (%s) Tj ET\n" % (x, y, text.encode()) for x, y, text in lines)
        kids.append(len(objects) + 1)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (len(objects) + 2, font)
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    return pdf_document(objects)


class TestParsedText:
    def test_a_pdf_reads_as_markitdown_reads_it(self, client: Letta, mock_llm: MockLLM) -> None:
        # Letta (no Mistral key): markitdown 0.1.2 → pdfminer.six's text, blank lines between text blocks, a form
        # feed before page 2, lines right-stripped, 3+ newlines squeezed to 2. Expected: markitdown's own output
        # for this PDF.
        report = pdf_pages(
            [
                (72, 720, "Deploy checklist"),
                (72, 700, "The launch code is PELICAN-42."),
                (72, 686, "Roll back with the blue switch."),
                (72, 640, "Second paragraph   after a gap."),
            ],
            [(72, 720, "Page two heading"), (300, 720, "right column"), (72, 700, "Last line.")],
        )
        text = (
            "Deploy checklist\n\nThe launch code is PELICAN-42.\nRoll back with the blue switch.\n\n"
            "Second paragraph   after a gap.\n\n\x0cPage two heading\n\nLast line.\n\nright column\n\n"
        )
        folder = make_folder(client)
        mock_llm.reset()
        uploaded = client.folders.files.upload(folder.id, file=("report.pdf", report, "application/pdf"))
        done = wait_done(client, folder.id, uploaded.id)
        assert (done.processing_status, done.total_chunks, done.chunks_embedded) == ("completed", 1, 1)
        assert client.folders.files.retrieve(uploaded.id, folder_id=folder.id, include_content=True).content == text
        assert embedded_texts(mock_llm) == [text.strip()]

    def test_a_pdf_without_text_is_an_empty_file(self, client: Letta, mock_llm: MockLLM) -> None:
        # markitdown gave "" for a page with nothing on it; Letta then stored an empty file and completed it
        folder = make_folder(client)
        mock_llm.reset()
        uploaded = client.folders.files.upload(folder.id, file=("scan.pdf", pdf_pages([]), "application/pdf"))
        done = wait_done(client, folder.id, uploaded.id)
        assert (done.processing_status, done.total_chunks, done.chunks_embedded) == ("completed", 1, 0)
        assert client.folders.files.retrieve(uploaded.id, folder_id=folder.id, include_content=True).content == ""
        assert mock_llm.embedding_requests == []

    def test_a_file_of_whitespace_is_shown_to_agents_then_fails_with_lettas_message(
        self, client: Letta, mock_llm: MockLLM
    ) -> None:
        # Letta stored the text and put the file in its agents' context, then its chunkers found no chunk
        folder = make_folder(client)
        agent = client.agents.create(name="reader", model=MODEL, embedding=EMBEDDING)
        client.agents.folders.attach(folder.id, agent_id=agent.id)
        uploaded = client.folders.files.upload(folder.id, file=("blank.txt", b"  \n\t\n", "text/plain"))
        done = wait_done(client, folder.id, uploaded.id)
        assert (done.processing_status, done.error_message) == (
            "error",
            "No chunks created from text with default chunker",
        )
        assert client.folders.files.retrieve(uploaded.id, folder_id=folder.id, include_content=True).content == (
            "  \n\t\n"
        )
        (shown,) = client.agents.files.list(agent.id).files  # open, as Letta's LineChunker shows blank lines
        assert (shown.file_id, shown.is_open, shown.visible_content) == (
            uploaded.id,
            True,
            "[Viewing file start (out of 0 lines)]",
        )


class TestOpenFiles:
    def test_a_file_closed_to_make_room_or_by_close_all_keeps_its_last_window(
        self, client: Letta, mock_llm: MockLLM
    ) -> None:
        # Letta's LRU eviction and close_all_other_files set is_open=False and visible_content=None only: the
        # row's start_line / end_line stay as they were (files_agents_manager.py)
        folder = make_folder(client)
        for name in ("a.txt", "b.txt"):
            upload(client, folder.id, name, "one\ntwo\nthree\n", "text/plain")
        agent = client.agents.create(name="reader", model=MODEL, embedding=EMBEDDING, max_files_open=1)
        client.agents.folders.attach(folder.id, agent_id=agent.id)
        mock_llm.reset()
        mock_llm.script(
            Reply.tool_call("open_files", {"file_requests": [{"file_name": "docs/a.txt", "offset": 1, "length": 1}]}),
            Reply.tool_call("open_files", {"file_requests": [{"file_name": "docs/b.txt", "offset": 0, "length": 2}]}),
            Reply.text("done"),
        )
        client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "read"}])
        files = {f.file_name: f for f in client.agents.files.list(agent.id).files}
        evicted, shown = files["docs/a.txt"], files["docs/b.txt"]
        assert (evicted.is_open, evicted.visible_content, evicted.start_line, evicted.end_line) == (False, None, 2, 2)
        assert (shown.is_open, shown.start_line, shown.end_line) == (True, 1, 2)
        assert client.agents.files.close_all(agent.id) == ["docs/b.txt"]
        closed = {f.file_name: f for f in client.agents.files.list(agent.id).files}["docs/b.txt"]
        assert (closed.is_open, closed.visible_content, closed.start_line, closed.end_line) == (False, None, 1, 2)

    def test_grep_files_shows_as_many_context_lines_as_asked_and_none_for_a_negative_count(
        self, client: Letta, mock_llm: MockLLM
    ) -> None:
        # Letta's _get_context_lines: no upper bound on context_lines; a negative count gives an empty match block
        folder = make_folder(client)
        upload(client, folder.id, "long.txt", "".join(f"row {i}\n" for i in range(1, 61)), "text/plain")
        agent = client.agents.create(name="grepper", model=MODEL, embedding=EMBEDDING)
        client.agents.folders.attach(folder.id, agent_id=agent.id)
        mock_llm.reset()
        mock_llm.script(
            Reply.tool_call("grep_files", {"pattern": "^row 30$", "context_lines": 25}),
            Reply.tool_call("grep_files", {"pattern": "^row 30$", "context_lines": -1}),
            Reply.text("done"),
        )
        response = client.agents.messages.create(agent.id, messages=[{"role": "user", "content": "find"}])
        wide, bare = [m.tool_return for m in response.messages if m.message_type == "tool_return_message"]
        block = [f"  {i}: row {i}" for i in range(5, 56)]
        block[25] = "> 30: row 30"
        assert wide.endswith("=== docs/long.txt:30 ===\n" + "\n".join(block) + "\n\nNo more matches to show.")
        assert bare.endswith("=== docs/long.txt:30 ===\n\n\nNo more matches to show.")
