"""`letta_memory_core` tools: the agent edits its memory blocks (append, replace, the `memory` command, patches)."""

from memlet.tools.base_tool_catalog.entry import LABEL, LETTA_MEMORY_CORE, ToolEntry, integer_param, string_param

MEMORY_TOOLS: list[ToolEntry] = [
    ToolEntry(
        "core_memory_append",
        LETTA_MEMORY_CORE,
        "Add text to the end of a core memory block.",
        {
            "label": string_param(LABEL),
            "content": string_param("Text to append. Any unicode, emoji included, is fine."),
        },
        ["label", "content"],
    ),
    ToolEntry(
        "core_memory_replace",
        LETTA_MEMORY_CORE,
        "Replace text in a core memory block. Pass an empty new_content to delete the old text.",
        {
            "label": string_param(LABEL),
            "old_content": string_param("The exact text to replace."),
            "new_content": string_param("The replacement text. Any unicode, emoji included, is fine."),
        },
        ["label", "old_content", "new_content"],
    ),
    ToolEntry(
        "memory",
        LETTA_MEMORY_CORE,
        "Manage memory blocks, addressed by paths such as /memories/<label>, through one of five commands."
        "\n\nExamples:\n"
        '    memory(command="create", path="/memories/projects", description="Projects the user runs.", '
        'file_text="Migrating the blog to Hugo.")\n'
        '    memory(command="str_replace", path="/memories/human", old_string="likes tea", new_string="likes coffee")\n'
        '    memory(command="insert", path="/memories/notes", insert_line=3, insert_text="Call back on Friday.")\n'
        '    memory(command="delete", path="/memories/scratch")\n'
        '    memory(command="rename", old_path="/memories/draft", new_path="/memories/final")\n'
        '    memory(command="rename", path="/memories/final", description="Finished notes.")',
        {
            "command": string_param(
                'One of "create" (make a new block), "str_replace" (replace text in a block), "insert" '
                '(add text at a line), "delete" (remove a block) or "rename" (change a block\'s path or description).'
            ),
            "path": string_param("Path of the block to act on (create, str_replace, insert, delete)."),
            "file_text": string_param("Initial value of the new block (create)."),
            "description": string_param("Description of the block (create, rename)."),
            "old_string": string_param("Text to replace (str_replace)."),
            "new_string": string_param("Replacement text (str_replace)."),
            "insert_line": integer_param("Line number to insert at (insert)."),
            "insert_text": string_param("Text to insert (insert)."),
            "old_path": string_param("Current path of the block (rename)."),
            "new_path": string_param("New path of the block (rename)."),
        },
        ["command"],
    ),
    ToolEntry(
        "memory_apply_patch",
        LETTA_MEMORY_CORE,
        "Edit memory blocks with a simplified unified diff."
        '\n\nWithout any "***" header lines, the patch applies to the single block named by label; its lines '
        'start with " " (context), "-" (remove) or "+" (add), and "@@" lines may separate hunks.'
        "\n\nWith headers, one patch can touch several blocks:\n"
        "    *** Add Block: <label>      then an optional 'Description: <text>' line and '+' content lines\n"
        "    *** Delete Block: <label>\n"
        "    *** Update Block: <label>   then a diff body as above\n"
        "    *** Move to: <new_label>    renames the block named by the header before it"
        "\n\nNever include line-number prefixes or the line-number warning banner; tabs are treated as spaces.",
        {
            "label": string_param(
                'Block to patch in single-block mode. Use an empty string "" when the patch carries "***" headers.'
            ),
            "patch": string_param('The patch: a plain diff for one block, or a multi-block patch with "***" headers.'),
        },
        ["label", "patch"],
    ),
]
