"""Letta 0.16.8's file processor tests (tests/test_file_processor.py, tests/test_embeddings.py), as a user of
`POST /v1/folders/{id}/upload` sees them: each file's status and chunk counts, the passages stored, and what the
embedding endpoint is sent."""

import httpx
from letta_client import Letta

from tests.api.test_folders_api import EMBEDDING, MODEL, make_folder, passages, wait_done
from tests.mock_llm import MockLLM, Reply


class TestEmptyFiles:
    def test_an_empty_file_completes_with_one_empty_chunk_and_is_shown_to_agents(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        # Letta split "" into one empty chunk, embedded none of it (the embedder skips empty chunks) and completed
        folder = make_folder(client)
        agent = client.agents.create(name="reader", model=MODEL, embedding=EMBEDDING)
        client.agents.folders.attach(folder.id, agent_id=agent.id)
        mock_llm.reset()
        empty = client.folders.files.upload(folder.id, file=("empty.txt", b"", "text/plain"))
        done = wait_done(client, folder.id, empty.id)
        assert (done.processing_status, done.total_chunks, done.chunks_embedded) == ("completed", 1, 0)
        assert done.error_message is None
        assert client.folders.files.retrieve(empty.id, folder_id=folder.id, include_content=True).content == ""
        assert passages(http, folder.id) == []
        assert mock_llm.embedding_requests == []
        (shown,) = client.agents.files.list(agent.id).files  # open, with nothing to show
        assert (shown.file_id, shown.is_open, shown.visible_content) == (empty.id, True, "")


class TestEmbeddingRequests:
    def test_chunks_go_to_the_endpoint_in_requests_of_the_folders_batch_size(
        self, client: Letta, mock_llm: MockLLM
    ) -> None:
        # Letta's file embedder sends embedding_config.batch_size chunks per request (32 unless set)
        default = client.folders.create(name="default", embedding=EMBEDDING, embedding_chunk_size=8)
        config = default.embedding_config.model_dump()
        assert (config["batch_size"], config["embedding_chunk_size"]) == (32, 8)  # 8 tokens: a chunk per line below
        small = client.folders.create(name="small", embedding_config={**config, "batch_size": 2})
        notes = "".join(f"Line {i} of the notes.\n" for i in range(40)).encode()
        for folder, sent in ((default, [32, 8]), (small, [2] * 20)):
            mock_llm.reset()
            uploaded = client.folders.files.upload(folder.id, file=("notes.txt", notes, "text/plain"))
            done = wait_done(client, folder.id, uploaded.id)
            assert (done.processing_status, done.total_chunks, done.chunks_embedded) == ("completed", 40, 40)
            assert [len(r["input"]) for r in mock_llm.embedding_requests] == sent

    def test_a_text_embedding_3_model_is_asked_for_the_configured_dimensions(
        self, client: Letta, mock_llm: MockLLM
    ) -> None:
        # memlet's own (README): Letta never sent `dimensions`, so text-embedding-3-large gave 3,072 whatever was set
        config = make_folder(client, "base").embedding_config.model_dump()
        large = {**config, "embedding_model": "text-embedding-3-large", "embedding_dim": 1024, "handle": None}
        folder = client.folders.create(name="large", embedding_config=large)
        mock_llm.reset()
        uploaded = client.folders.files.upload(folder.id, file=("notes.txt", b"Deploy on Fridays.", "text/plain"))
        assert wait_done(client, folder.id, uploaded.id).processing_status == "completed"
        assert [(r["model"], r["dimensions"]) for r in mock_llm.embedding_requests] == [
            ("text-embedding-3-large", 1024)
        ]


class TestJsonChunks:
    def test_a_json_file_is_embedded_as_key_path_lines_per_object(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        # Letta chunked application/json with llama-index's JSON parser: a passage per element of a top-level array
        # (or one for an object), a line per leaf with its keys; an empty object is a chunk but is not embedded
        people = (
            b'[{"name": "Alice", "role": {"title": "admin", "level": 2}}, {}, {"name": "Bob", "tags": ["x", true]}]'
        )
        folder = make_folder(client)
        mock_llm.reset()
        uploaded = client.folders.files.upload(folder.id, file=("people.json", people, "application/json"))
        done = wait_done(client, folder.id, uploaded.id)
        assert (done.processing_status, done.total_chunks, done.chunks_embedded) == ("completed", 3, 2)
        expected = ["name Alice\nrole title admin\nrole level 2", "name Bob\ntags x\ntags True"]
        assert sorted(p["text"] for p in passages(http, folder.id)) == expected
        assert [r["input"] for r in mock_llm.embedding_requests] == [expected]
        stored = client.folders.files.retrieve(uploaded.id, folder_id=folder.id, include_content=True)
        assert stored.content == people.decode()  # the file itself is kept as uploaded

    def test_json_that_is_no_object_or_array_is_chunked_as_text(self, client: Letta, http: httpx.Client) -> None:
        # A scalar went to Letta's text splitter; broken JSON too (there Letta's fallback then failed the file)
        folder = make_folder(client)
        for name, body in (("answer.json", b"42"), ("broken.json", b'{"name": "Al')):
            uploaded = client.folders.files.upload(folder.id, file=(name, body, "application/json"))
            done = wait_done(client, folder.id, uploaded.id)
            assert (done.processing_status, done.total_chunks, done.chunks_embedded) == ("completed", 1, 1)
        assert sorted(p["text"] for p in passages(http, folder.id)) == ["42", '{"name": "Al']


class TestEmbeddingFailures:
    def test_a_refused_embedding_fails_the_file_in_the_providers_words_and_keeps_no_passage(
        self, client: Letta, http: httpx.Client, mock_llm: MockLLM
    ) -> None:
        # Letta's file embedder raised the provider's own error ("Error code: 401 - ..."), and stored passages only
        # after every batch was embedded; the file processor then tried once more with its fallback chunks
        config = make_folder(client, "base").embedding_config.model_dump()
        folder = client.folders.create(name="small", embedding_config={**config, "batch_size": 1})
        notes = b"First paragraph here.\n\n" + b"x " * 700 + b"\n\nThird paragraph here.\n"
        mock_llm.reset()
        refused = Reply.error(401, times=9, message="Incorrect API key provided: sk-mock")
        mock_llm.script_embeddings(Reply.delay(0), refused)
        uploaded = client.folders.files.upload(folder.id, file=("notes.txt", notes, "text/plain"))
        done = wait_done(client, folder.id, uploaded.id)
        # the first chunk was embedded, the second refused; the retry's first chunk was refused too
        assert len(mock_llm.embedding_requests) == 3
        assert done.processing_status == "error"
        assert done.error_message == "Error code: 401 - Incorrect API key provided: sk-mock"
        assert passages(http, folder.id) == []

    def test_a_batch_refused_as_too_large_is_sent_again_in_halves(self, client: Letta, mock_llm: MockLLM) -> None:
        # Letta halved a failed batch until it passed, down to single texts; a single text refused failed the file
        config = make_folder(client, "base").embedding_config.model_dump()
        folder = client.folders.create(name="four", embedding_config={**config, "embedding_chunk_size": 8})
        notes = "".join(f"Line {i} of the notes.\n" for i in range(4)).encode()
        mock_llm.reset()
        mock_llm.script_embeddings(Reply.error(413, message="Too many inputs"))
        uploaded = client.folders.files.upload(folder.id, file=("notes.txt", notes, "text/plain"))
        done = wait_done(client, folder.id, uploaded.id)
        assert (done.processing_status, done.total_chunks, done.chunks_embedded) == ("completed", 4, 4)
        assert [len(r["input"]) for r in mock_llm.embedding_requests] == [4, 2, 2]
        mock_llm.reset()
        mock_llm.script_embeddings(Reply.error(400, times=5, message="Input too long"))
        uploaded = client.folders.files.upload(folder.id, file=("again.txt", notes, "text/plain"))
        done = wait_done(client, folder.id, uploaded.id)
        assert (done.processing_status, done.error_message) == ("error", "Error code: 400 - Input too long")
        # then Letta's retry: the four lines are one fallback chunk, refused as well
        assert [len(r["input"]) for r in mock_llm.embedding_requests] == [4, 2, 1, 1]
