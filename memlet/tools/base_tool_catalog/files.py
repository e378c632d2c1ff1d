"""`letta_files_core` tools: opening, grepping and searching the files of the agent's attached folders."""

from memlet.tools.base_tool_catalog.entry import LETTA_FILES_CORE, ToolEntry, integer_param, string_param

FILE_TOOLS: list[ToolEntry] = [
    ToolEntry(
        "open_files",
        LETTA_FILES_CORE,
        "Open up to 5 files into the files section of core memory, whole or as a range of lines."
        "\n\nExamples:\n"
        '    open_files(file_requests=[{"file_name": "docs/setup.md"}])\n'
        '    open_files(file_requests=[{"file_name": "src/app.py", "offset": 100, "length": 50}], '
        "close_all_others=True)",
        {
            "file_requests": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "file_name": string_param("Name of the file to open, including its folder."),
                        "offset": integer_param("First line to show, counted from 0. Omit to start at the top."),
                        "length": integer_param("Number of lines to show from offset. Omit to show the rest."),
                    },
                    "required": ["file_name"],
                },
                "description": "The files to open, each with an optional line range.",
            },
            "close_all_others": {"type": "boolean", "description": "Close every other open file first."},
        },
        ["file_requests"],
    ),
    ToolEntry(
        "grep_files",
        LETTA_FILES_CORE,
        "Search the contents of attached files for a keyword or regular expression and show each match with "
        "surrounding lines."
        "\n\nResults come 20 matches at a time, after a summary of how many matches each file has; pass offset "
        'to see the next page (grep_files(pattern="TODO", offset=20) shows matches 21-40).',
        {
            "pattern": string_param("Keyword or regular expression to find in file contents."),
            "include": string_param("Keyword or regular expression that file names must match."),
            "context_lines": integer_param("Lines of context before and after each match (like grep -C). Default 1."),
            "offset": integer_param("Number of matches to skip, for paging: 0 for the first page, 20 for the second."),
        },
        ["pattern"],
        parallel=True,
    ),
    ToolEntry(
        "semantic_search_files",
        LETTA_FILES_CORE,
        "Search attached files by meaning rather than exact words, to find related passages when you do not "
        "know the exact terms.",
        {
            "query": string_param("What to look for, in natural language."),
            "limit": integer_param("Most results to return."),
        },
        ["query"],
        parallel=True,
    ),
]
