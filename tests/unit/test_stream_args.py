"""ArgumentSplitter: chosen string members decoded as they stream, the rest of the object passed on as JSON."""

import json
from typing import Any

import pytest

from memlet.loop.stream_args import ArgumentSplitter, Piece

FIELDS = ("thinking", "message")


def split(text: str, size: int, fields: tuple[str, ...] = FIELDS) -> tuple[dict[str | None, str], list[Piece]]:
    """Feed `text` in slices of `size`; return the joined text per field (None = the rest) and all pieces."""
    splitter = ArgumentSplitter(fields)
    pieces = [p for i in range(0, len(text), size) for p in splitter.feed(text[i : i + size])]
    joined: dict[str | None, str] = {}
    for piece in pieces:
        joined[piece.field] = joined.get(piece.field, "") + piece.text
    assert splitter.done or not text.lstrip().startswith("{")
    return joined, pieces


TRICKY = 'line one\nline "two"\\ tab\there / caf\u00e9 \U0001f600 end\\n'


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 8, 1000])
@pytest.mark.parametrize("ensure_ascii", [True, False])
def test_escapes_split_anywhere_decode_exactly(size: int, ensure_ascii: bool) -> None:
    args = {"thinking": TRICKY, "message": 'Hi "there"\n\u2603'}
    joined, _ = split(json.dumps(args, ensure_ascii=ensure_ascii), size)
    assert joined["thinking"] == args["thinking"]
    assert joined["message"] == args["message"]
    assert json.loads(joined[None]) == {}


@pytest.mark.parametrize("size", [1, 4, 9, 1000])
def test_other_members_pass_through_without_the_fields(size: int) -> None:
    args: dict[str, Any] = {
        "label": "human",
        "thinking": "note it",
        "nested": {"a": [1, {"b": '}]\\"'}], "c": None},
        "count": 12.5,
        "flag": True,
        "request_heartbeat": False,
    }
    joined, _ = split(json.dumps(args), size)
    assert joined["thinking"] == "note it"
    rest = {k: v for k, v in args.items() if k != "thinking"}
    assert json.loads(joined[None]) == rest
    assert list(json.loads(joined[None])) == list(rest)  # order kept


@pytest.mark.parametrize("order", [("thinking", "message"), ("message", "thinking")])
def test_key_order_does_not_matter(order: tuple[str, str]) -> None:
    values = {"thinking": "first thoughts", "message": "the reply"}
    text = json.dumps({key: values[key] for key in order})
    joined, pieces = split(text, 3)
    assert joined["thinking"] == values["thinking"] and joined["message"] == values["message"]
    fields_in_order = [p.field for p in pieces if p.field is not None]
    assert fields_in_order[0] == order[0] and fields_in_order[-1] == order[1]


def test_compact_and_spaced_json() -> None:
    text = '{ "thinking" :"a\\u0041b" ,\n "query":"tea" , "n" : 3 }'
    joined, _ = split(text, 2)
    assert joined["thinking"] == "aAb"
    assert json.loads(joined[None]) == {"query": "tea", "n": 3}


def test_surrogate_pair_split_between_fragments() -> None:
    splitter = ArgumentSplitter(["thinking"])
    got = splitter.feed('{"thinking": "x\\ud83d')
    got += splitter.feed('\\ude00y"}')
    assert "".join(p.text for p in got if p.field == "thinking") == "x\U0001f600y"
    assert splitter.completed == {"thinking": "x\U0001f600y"}


def test_lone_surrogate_is_kept_as_json_loads_keeps_it() -> None:
    text = '{"thinking": "a\\ud83db"}'
    joined, _ = split(text, 1)
    assert joined["thinking"] == json.loads(text)["thinking"]


def test_rest_brace_held_back_until_a_member_comes() -> None:
    splitter = ArgumentSplitter(["thinking"])
    assert splitter.feed('{"thinking": "hm') == [Piece("thinking", "hm")]
    assert splitter.open_field == "thinking"
    assert splitter.feed('m", "q') == [Piece("thinking", "m")]
    assert splitter.completed == {"thinking": "hmm"}
    assert splitter.feed('": 1}') == [Piece(None, '{"q": 1}')]
    assert splitter.done


def test_empty_field_yields_no_piece_but_is_completed() -> None:
    joined, pieces = split('{"thinking": "", "message": "ok"}', 4)
    assert "thinking" not in joined and joined["message"] == "ok"
    assert all(p.text for p in pieces)


def test_non_string_field_value_passes_through() -> None:
    joined, _ = split('{"message": {"k": "v"}, "thinking": "t"}', 3)
    assert joined["thinking"] == "t"
    assert json.loads(joined[None]) == {"message": {"k": "v"}}


def test_escaped_key_is_matched_by_its_decoded_name() -> None:
    joined, _ = split('{"thin\\u006bing": "t", "x\\"y": 1}', 2)
    assert joined["thinking"] == "t"
    assert json.loads(joined[None]) == {'x"y': 1}


def test_text_that_is_not_an_object_passes_through() -> None:
    joined, _ = split("not json at all", 4)
    assert joined == {None: "not json at all"}


def test_no_fields_is_the_identity_on_compact_json() -> None:
    text = json.dumps({"a": 1, "b": [1, 2], "c": "x"})
    joined, _ = split(text, 5, fields=())
    assert joined[None] == text


@pytest.mark.parametrize("size", [1, 3, 1000])
def test_dropped_members_are_left_out_whatever_their_value(size: int) -> None:
    args = {"request_heartbeat": True, "a": 1, "thinking": "t", "opts": {"x": [1]}, "b": "s"}
    splitter = ArgumentSplitter(["thinking"], drop=["request_heartbeat", "opts"])
    text = json.dumps(args)
    pieces = [p for i in range(0, len(text), size) for p in splitter.feed(text[i : i + size])]
    assert json.loads("".join(p.text for p in pieces if p.field is None)) == {"a": 1, "b": "s"}
    assert splitter.completed == {"thinking": "t"}


def test_only_dropped_members_leave_an_empty_object() -> None:
    splitter = ArgumentSplitter([], drop=["request_heartbeat"])
    assert splitter.feed('{"request_heartbeat": false}') == [Piece(None, "{}")]
