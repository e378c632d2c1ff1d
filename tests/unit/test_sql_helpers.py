"""The shared LIKE escaping: wildcards and the escape character match themselves."""

from memlet.db.sql import escape_like


def test_wildcards_and_backslash_are_escaped() -> None:
    assert escape_like(r"50%_off\now") == r"50\%\_off\\now"


def test_plain_text_is_unchanged() -> None:
    assert escape_like("hello world") == "hello world"
