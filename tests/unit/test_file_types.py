"""Upload media types and the line strategy each stored type gets, as Letta 0.16.8 picks them."""

import pytest

from memlet.folders import line_view
from memlet.folders.file_types import LineStrategy, line_strategy, stored_media_type, unsupported_upload

DOC = "# Guide\nFirst step. Second step.\n"


class TestStoredMediaType:
    @pytest.mark.parametrize(
        ("name", "expected"),
        [
            ("guide.md", "text/x-markdown"),
            ("GUIDE.MD", "text/x-markdown"),
            ("guide.markdown", "text/markdown"),
            ("rows.jsonl", "application/x-jsonlines"),
            ("feed.xml", "text/xml"),
            ("data.csv", "text/csv"),
            ("main.py", "text/x-python"),
        ],
    )
    def test_the_name_decides_before_the_declared_type(self, name: str, expected: str) -> None:
        assert stored_media_type("application/octet-stream", name) == expected

    def test_a_name_without_a_type_keeps_the_declared_one(self) -> None:
        assert stored_media_type("text/plain", "README") == "text/plain"
        assert stored_media_type(None, "README") == "unknown"


class TestUnsupportedUpload:
    def test_a_supported_declared_type_or_name_is_enough(self) -> None:
        assert unsupported_upload("text/plain", "README") is None
        assert unsupported_upload("application/octet-stream", "notes.md") is None
        assert unsupported_upload("text/x-markdown", "x") is None

    def test_an_alias_that_letta_does_not_list_is_refused_without_a_known_name(self) -> None:
        assert unsupported_upload("application/x-yaml", "config") == "unknown"
        assert unsupported_upload("application/octet-stream", "x.exe") is not None


class TestLineStrategy:
    def test_alias_types_are_split_into_lines(self) -> None:
        for media_type in ("text/x-markdown", "application/x-jsonlines", "text/xml"):
            assert line_strategy(media_type, "f.md") is LineStrategy.LINES

    def test_markdown_from_an_agent_file_keeps_sentences(self) -> None:
        assert line_strategy("text/markdown", "f.md") is LineStrategy.DOCUMENTATION
        assert line_strategy(None, "f.md") is LineStrategy.DOCUMENTATION

    def test_views(self) -> None:
        assert line_view.window(DOC, "text/x-markdown", "d/guide.md").splitlines() == [
            "[Viewing file start (out of 2 lines)]",
            "1: # Guide",
            "2: First step. Second step.",
        ]
        assert line_view.window(DOC, "text/markdown", "d/guide.md").splitlines() == [
            "[Viewing file start (out of 2 sentences)]",
            "1: # Guide First step.",
            "2: Second step.",
        ]
