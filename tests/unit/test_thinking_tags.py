"""`<thinking>` tags split across streamed fragments are still taken out, and nothing else is held back."""

from memlet.llm.thinking_tags import TagStripper


def stripped(*fragments: str) -> list[str]:
    stripper = TagStripper()
    return [*(stripper.feed(f) for f in fragments), stripper.flush()]


def test_a_closing_tag_split_across_fragments() -> None:
    assert stripped("Hi Bob.</thi", "nking>", "\n") == ["Hi Bob.", "", "\n", ""]


def test_an_opening_tag_with_attributes() -> None:
    assert "".join(stripped("<think", 'ing mode="x">Plan', ".")) == "Plan."


def test_other_angle_brackets_pass() -> None:
    assert stripped("a < b", " and <b>c</b>") == ["a < b", " and <b>c</b>", ""]
    assert stripped("ends with <") == ["ends with ", "<"]
