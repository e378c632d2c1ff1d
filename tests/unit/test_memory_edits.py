"""Pure memory-block edits behind the built-in memory tools, and the omni `memory` command planner."""

from collections.abc import Callable
from typing import Any

import pytest

from memlet.loop.memory_edits import (
    LINE_NUMBER_WARNING,
    READ_ONLY_BLOCK_EDIT_ERROR,
    CreatePlan,
    DeletePlan,
    DescribePlan,
    InsertPlan,
    MemoryEditError,
    RenamePlan,
    StrReplacePlan,
    block_exists_error,
    core_memory_append,
    core_memory_replace,
    label_from_path,
    memory_insert,
    memory_replace,
    memory_rethink,
    missing_block_error,
    plan_memory_command,
    plan_result,
    unknown_label_error,
)

PREFIX_HINT = (
    "contains a line number prefix, which is not allowed. Do not include line numbers when calling memory "
    "tools (line numbers are for display purposes only)."
)


def _error_text(excinfo: pytest.ExceptionInfo[MemoryEditError]) -> str:
    return str(excinfo.value)


class TestReadOnly:
    @pytest.mark.parametrize(
        "edit",
        [
            lambda: core_memory_append("v", "x", read_only=True),
            lambda: core_memory_replace("v", "human", "v", "w", read_only=True),
            lambda: memory_replace("v", "human", "v", "w", read_only=True),
            lambda: memory_insert("v", "x", read_only=True),
            lambda: memory_rethink("x", read_only=True),
        ],
    )
    def test_every_edit_rejects_read_only(self, edit: Callable[[], str]) -> None:
        with pytest.raises(MemoryEditError) as excinfo:
            edit()
        assert _error_text(excinfo) == "Error This block is read-only and cannot be edited."
        assert _error_text(excinfo) == READ_ONLY_BLOCK_EDIT_ERROR

    def test_read_only_checked_before_argument_checks(self) -> None:
        with pytest.raises(MemoryEditError, match="read-only"):
            memory_replace("v", "human", "1→ v", "w", read_only=True)


class TestCoreMemoryAppend:
    def test_appends_on_new_line(self) -> None:
        assert core_memory_append("Name: Sam", "Likes tea") == "Name: Sam\nLikes tea"


class TestCoreMemoryReplace:
    def test_replaces_all_occurrences(self) -> None:
        assert core_memory_replace("tea and tea", "human", "tea", "coffee") == "coffee and coffee"

    def test_missing_text_error(self) -> None:
        with pytest.raises(MemoryEditError) as excinfo:
            core_memory_replace("Name: Sam", "human", "tea", "coffee")
        assert _error_text(excinfo) == "Old content 'tea' not found in memory block 'human'"

    def test_empty_old_content_is_not_found(self) -> None:
        with pytest.raises(MemoryEditError, match="Old content '' not found"):
            core_memory_replace("abc", "human", "", "x")


class TestMemoryReplace:
    def test_replaces_single_occurrence(self) -> None:
        assert memory_replace("Likes tea.\nName: Sam", "human", "tea", "coffee") == "Likes coffee.\nName: Sam"

    def test_can_delete_with_empty_new_string(self) -> None:
        assert memory_replace("a b c", "human", " b", "") == "a c"

    def test_an_empty_block_is_filled_by_replacing_the_empty_string(self) -> None:
        """Letta counts "" once in "" (Python's str.count), so the model can fill an empty block this way."""
        assert memory_replace("", "human", "", "Name: Sam") == "Name: Sam"
        with pytest.raises(MemoryEditError, match="did not appear verbatim"):
            memory_replace("abc", "human", "", "x")

    def test_absent_error(self) -> None:
        with pytest.raises(MemoryEditError) as excinfo:
            memory_replace("Name: Sam", "human", "tea", "coffee")
        assert _error_text(excinfo) == (
            "No replacement was performed, old_string `tea` did not appear verbatim in memory block with label `human`."
        )

    def test_multiple_occurrences_error_names_lines(self) -> None:
        value = "tea\nnothing\nmore tea and tea\ntea"
        with pytest.raises(MemoryEditError) as excinfo:
            memory_replace(value, "human", "tea", "coffee")
        assert _error_text(excinfo) == (
            "No replacement was performed. Multiple occurrences of old_string `tea` in lines [1, 3, 4]. "
            "Please ensure it is unique."
        )

    def test_multiline_duplicates_report_start_lines(self) -> None:
        value = "a\nb\nx\na\nb"
        with pytest.raises(MemoryEditError, match=r"in lines \[1, 4\]\."):
            memory_replace(value, "human", "a\nb", "z")

    @pytest.mark.parametrize("old", ["12→ Likes tea", "Name\n  3→Likes tea"])
    def test_rejects_line_number_prefix_in_old_string(self, old: str) -> None:
        with pytest.raises(MemoryEditError) as excinfo:
            memory_replace("Likes tea", "human", old, "x")
        assert _error_text(excinfo) == f"old_string {PREFIX_HINT}"

    def test_rejects_line_number_prefix_in_new_string(self) -> None:
        with pytest.raises(MemoryEditError) as excinfo:
            memory_replace("Likes tea", "human", "tea", "1→ coffee")
        assert _error_text(excinfo) == f"new_string {PREFIX_HINT}"

    def test_rejects_pasted_warning(self) -> None:
        with pytest.raises(MemoryEditError, match=r"^old_string contains a line number warning"):
            memory_replace("Likes tea", "human", f"{LINE_NUMBER_WARNING}\nLikes tea", "x")

    def test_arrow_inside_a_line_is_allowed(self) -> None:
        assert memory_replace("a→b", "human", "a→b", "c") == "c"

    def test_tabs_are_expanded_before_matching(self) -> None:
        assert memory_replace("key:\tvalue", "human", "key:\tvalue", "k") == "k"


class TestMemoryInsert:
    value = "one\ntwo\nthree"

    def test_default_appends_at_end(self) -> None:
        assert memory_insert(self.value, "four") == "one\ntwo\nthree\nfour"

    def test_none_appends_at_end(self) -> None:
        assert memory_insert(self.value, "four", None) == "one\ntwo\nthree\nfour"

    def test_zero_inserts_at_top(self) -> None:
        assert memory_insert(self.value, "zero", 0) == "zero\none\ntwo\nthree"

    def test_inserts_after_given_line(self) -> None:
        assert memory_insert(self.value, "a\nb", 1) == "one\na\nb\ntwo\nthree"

    def test_last_line_number_is_valid(self) -> None:
        assert memory_insert(self.value, "four", 3) == "one\ntwo\nthree\nfour"

    def test_into_empty_block(self) -> None:
        assert memory_insert("", "first") == "first"

    @pytest.mark.parametrize("line", [4, -2])
    def test_out_of_range_error(self, line: int) -> None:
        with pytest.raises(MemoryEditError) as excinfo:
            memory_insert(self.value, "x", line)
        assert _error_text(excinfo) == (
            f"Invalid `insert_line` parameter: {line}. It should be within the range of lines of the memory "
            "block: [0, 3], or -1 to append to the end of the memory block."
        )

    def test_rejects_line_number_prefix(self) -> None:
        with pytest.raises(MemoryEditError) as excinfo:
            memory_insert(self.value, "4→ four")
        assert _error_text(excinfo) == f"new_string {PREFIX_HINT}"

    def test_error_names_omni_argument(self) -> None:
        with pytest.raises(MemoryEditError) as excinfo:
            memory_insert(self.value, "4→ four", arg_name="insert_text")
        assert _error_text(excinfo) == f"insert_text {PREFIX_HINT}"


class TestMemoryRethink:
    def test_replaces_everything(self) -> None:
        assert memory_rethink("brand new") == "brand new"

    def test_rejects_line_numbers(self) -> None:
        with pytest.raises(MemoryEditError) as excinfo:
            memory_rethink("1→ brand new")
        assert _error_text(excinfo) == f"new_memory {PREFIX_HINT}"

    def test_rejects_pasted_warning(self) -> None:
        with pytest.raises(MemoryEditError, match=r"^new_memory contains a line number warning"):
            memory_rethink(LINE_NUMBER_WARNING)


class TestLookupErrors:
    def test_unknown_label(self) -> None:
        assert str(unknown_label_error("pets", ["human", "persona"])) == (
            "Block field pets does not exist (available sections = human, persona)"
        )

    def test_missing_and_existing_block(self) -> None:
        assert str(missing_block_error("pets")) == "Error: Memory block 'pets' does not exist"
        assert str(block_exists_error("pets")) == "Error: Memory block 'pets' already exists"


class TestPlanMemoryCommand:
    def test_label_from_path(self) -> None:
        assert label_from_path("/memories/human") == "human"
        assert label_from_path("/human") == "human"
        assert label_from_path("human") == "human"

    def test_create(self) -> None:
        plan = plan_memory_command("create", path="/memories/pets", description="Pets", file_text="Dog")
        assert plan == CreatePlan(label="pets", description="Pets", value="Dog")
        assert plan_memory_command("create", path="/memories/p", description="d") == CreatePlan("p", "d", "")

    def test_str_replace(self) -> None:
        plan = plan_memory_command("str_replace", path="/memories/human", old_string="a", new_string="")
        assert plan == StrReplacePlan(label="human", old_string="a", new_string="")

    def test_insert_defaults_to_end(self) -> None:
        plan = plan_memory_command("insert", path="/memories/human", insert_text="x")
        assert plan == InsertPlan(label="human", insert_text="x", insert_line=-1)
        assert plan_memory_command("insert", path="/memories/h", insert_text="x", insert_line=0) == InsertPlan(
            "h", "x", 0
        )

    def test_delete(self) -> None:
        assert plan_memory_command("delete", path="/memories/pets") == DeletePlan(label="pets")

    def test_rename_label(self) -> None:
        plan = plan_memory_command("rename", old_path="/memories/a", new_path="/memories/b")
        assert plan == RenamePlan(old_label="a", new_label="b")

    def test_rename_with_description_updates_description(self) -> None:
        plan = plan_memory_command("rename", path="/memories/a", description="new desc")
        assert plan == DescribePlan(label="a", description="new desc")

    @pytest.mark.parametrize(
        ("command", "kwargs", "message"),
        [
            ("create", {"description": "d"}, "Error: path is required for create command"),
            ("create", {"path": "/memories/a"}, "Error: description is required for create command"),
            (
                "str_replace",
                {"path": "/memories/a", "new_string": "b"},
                "Error: old_string is required for str_replace command",
            ),
            (
                "str_replace",
                {"path": "/memories/a", "old_string": "b"},
                "Error: new_string is required for str_replace command",
            ),
            ("insert", {"path": "/memories/a"}, "Error: insert_text is required for insert command"),
            ("delete", {}, "Error: path is required for delete command"),
            (
                "rename",
                {"old_path": "/memories/a"},
                "Error: path and description are required for update_description command, or old_path and "
                "new_path are required for rename command",
            ),
            (
                "view",
                {},
                "Error: Unknown command 'view'. Supported commands: create, str_replace, insert, delete, rename",
            ),
        ],
    )
    def test_argument_errors(self, command: str, kwargs: dict[str, Any], message: str) -> None:
        with pytest.raises(MemoryEditError) as excinfo:
            plan_memory_command(command, **kwargs)
        assert _error_text(excinfo) == message

    def test_results_name_the_blocks(self) -> None:
        assert "'pets'" in plan_result(CreatePlan("pets", "d", ""))
        assert "'pets'" in plan_result(DeletePlan("pets"))
        assert "'a' to 'b'" in plan_result(RenamePlan("a", "b"))
        assert "'a'" in plan_result(DescribePlan("a", "d"))

    def test_text_edit_plans_have_no_summary(self) -> None:
        with pytest.raises(TypeError):
            plan_result(StrReplacePlan("a", "b", "c"))
