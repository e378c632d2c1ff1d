"""Where compaction may cut: turn boundaries only, and how the sliding window grows its cut."""

from dataclasses import dataclass, field
from typing import Any

from memlet.loop.compaction_plan import choose_cut, cut_points, trigger_threshold, turn_complete
from memlet.loop.summarizer import SummarizerSettings


@dataclass
class Row:
    role: str
    run_id: str | None
    tool_calls: list[Any] = field(default_factory=list)


def turn(run: str, steps: int = 1) -> list[Row]:
    rows = [Row("user", run)]
    for _ in range(steps - 1):
        rows += [Row("assistant", run, [{"id": "c"}]), Row("tool", run)]
    return [*rows, Row("assistant", run)]


def test_cuts_only_where_a_turn_starts() -> None:
    rows = [Row("user", None), *turn("r1", 3), *turn("r2"), *turn("r3", 2)]
    # the old summary at 0; r1 at 1..6, r2 at 7..8, r3 at 9..12
    assert cut_points(rows, complete=True) == [1, 7, 9, 13]
    assert cut_points(rows, complete=False) == [1, 7, 9]  # mid-turn: the current turn stays
    assert turn_complete(rows) and not turn_complete([*rows, Row("assistant", "r4", [{"id": "c"}])])


def test_sliding_window_grows_until_it_fits_then_falls_back_to_all() -> None:
    cuts = [2, 4, 6, 8, 10]
    sliding = SummarizerSettings(sliding_window_percentage=0.3)
    assert choose_cut(10, cuts, sliding, lambda i: True) == 4  # 40% of the rows, at the boundary before it
    assert choose_cut(10, cuts, sliding, lambda i: i >= 6) == 6
    assert choose_cut(10, cuts, sliding, lambda i: False) == 10  # nothing fits: everything complete goes
    assert choose_cut(10, cuts, SummarizerSettings(mode="all"), lambda i: True) == 10
    assert choose_cut(10, cuts, SummarizerSettings(sliding_window_percentage=0.6), lambda i: True) == 6


def test_settings_merge_request_over_agent() -> None:
    stored = {"mode": "sliding_window", "prompt": "agent's", "clip_chars": 100, "model": "openai/gpt-4o-mini"}
    merged = SummarizerSettings.from_stored(stored, {"mode": "self_compact_all", "clip_chars": None})
    assert (merged.mode, merged.prompt, merged.clip_chars, merged.model) == ("all", "agent's", None, stored["model"])
    assert trigger_threshold(4000) == 3600
