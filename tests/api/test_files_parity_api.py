"""Folder files as Letta 0.16.8 shows them: how uploads are chunked (the passages stored, embedded and searched),
the text a PDF gives, and the details of an agent's open files.

Expected chunks were worked out with llama-index's own `SentenceSplitter` / `MarkdownNodeParser` (0.14.10, the
version Letta 0.16.8 locks) on the same texts, and are written here as the sentences they hold."""

from typing import Any

import httpx
from letta_client import Letta

from tests.api.test_folders_api import make_folder, passages, wait_done
from tests.mock_llm import MockLLM

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
