"""The packed JSON texts that stored tool returns and user messages carry."""

from memlet.messages.packing import (
    format_local_time,
    pack_system_alert,
    pack_tool_return,
)
from tests.unit.message_view_support import NOW


class TestPacking:
    def test_tool_return_exact_text(self) -> None:
        assert pack_tool_return(True, "Bob likes go.", now=NOW) == (
            '{\n  "status": "OK",\n  "message": "Bob likes go.",\n  "time": "2026-11-22 03:03:38 AM UTC+0000"\n}'
        )

    def test_time_in_agent_timezone(self) -> None:
        assert format_local_time("America/Los_Angeles", NOW) == "2026-11-21 07:03:38 PM PST-0800"

    def test_system_alert_is_compact_and_not_packed_twice(self) -> None:
        packed = pack_system_alert("Ünïcode", now=NOW)
        assert packed == (
            '{"type": "system_alert", "message": "\\u00dcn\\u00efcode", "time": "2026-11-22 03:03:38 AM UTC+0000"}'
        )
        assert pack_system_alert(packed, now=NOW) == packed
