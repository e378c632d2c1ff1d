"""`letta_sleeptime_core` tools: exact-text and line-aware edits of memory blocks, a full rethink, and finishing."""

from memlet.tools.base_tool_catalog.entry import (
    LABEL,
    LETTA_SLEEPTIME_CORE,
    NO_LINE_NUMBERS,
    ToolEntry,
    integer_param,
    string_param,
)

SLEEPTIME_TOOLS: list[ToolEntry] = [
    ToolEntry(
        "memory_replace",
        LETTA_SLEEPTIME_CORE,
        "Replace one exact piece of text in a memory block with new text, for small precise edits."
        "\n\nThe old text must appear exactly once in the block. Do not use this to rewrite a whole block."
        "\n\nExamples:\n"
        '    memory_replace(label="human", old_string="Name: Ana", new_string="Name: Anna")\n'
        '    memory_replace(label="todo", old_string="- [ ] book flights", new_string="- [x] book flights")\n'
        '    memory_replace(label="human", old_string="Owns a cat.", new_string="")  # deletes the text\n'
        '    Wrong: memory_replace(label="human", old_string="3→ Name: Ana", ...)  # line numbers are view-only',
        {
            "label": string_param(LABEL),
            "old_string": string_param("The exact text to replace, whitespace and indentation included."),
            "new_string": string_param(f"The text to put in its place. {NO_LINE_NUMBERS}"),
        },
        ["label", "old_string", "new_string"],
    ),
    ToolEntry(
        "memory_insert",
        LETTA_SLEEPTIME_CORE,
        "Insert text into a memory block at a given line."
        "\n\nExamples:\n"
        '    memory_insert(label="human", new_string="Prefers email over calls.")  # appends at the end\n'
        '    memory_insert(label="human", new_string="Name: Anna", insert_line=0)  # inserts at the top',
        {
            "label": string_param(LABEL),
            "new_string": string_param(f"The text to insert. {NO_LINE_NUMBERS}"),
            "insert_line": integer_param("Insert after this line; 0 puts the text first. The default -1 appends it."),
        },
        ["label", "new_string"],
    ),
    ToolEntry(
        "memory_rethink",
        LETTA_SLEEPTIME_CORE,
        "Rewrite a memory block completely. Use it for large reorganisations or condensing a block, not for "
        "small edits such as changing one line.",
        {
            "label": string_param("Label of the memory block to rewrite."),
            "new_memory": string_param("The full new contents, merging what is still true with what was learned."),
        },
        ["label", "new_memory"],
    ),
    ToolEntry(
        "memory_finish_edits",
        LETTA_SLEEPTIME_CORE,
        "Signal that you have finished editing the memory blocks and have integrated all new information.",
    ),
]
