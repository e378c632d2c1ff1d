"""`letta_builtin` tools that reach outside the agent: code execution, web search and page fetching."""

from memlet.tools.base_tool_catalog.entry import (
    LETTA_BUILTIN,
    ToolEntry,
    enum_param,
    integer_param,
    string_param,
    strings_param,
)

BUILTIN_TOOLS: list[ToolEntry] = [
    ToolEntry(
        "run_code",
        LETTA_BUILTIN,
        "Run a snippet of Python, JavaScript, TypeScript, R or Java in a sandbox and return its output.",
        {
            "code": string_param("The code to run."),
            "language": enum_param(["python", "js", "ts", "r", "java"], "Language of the code."),
        },
        ["code", "language"],
        parallel=True,
    ),
    ToolEntry(
        "run_code_with_tools",
        LETTA_BUILTIN,
        "Run Python code that may call this agent's tools directly as functions.",
        {"code": string_param("The Python code to run.")},
        ["code"],
    ),
    ToolEntry(
        "web_search",
        LETTA_BUILTIN,
        "Search the web and return matching pages with titles, URLs, highlights and summaries."
        "\n\nExamples:\n"
        '    web_search("solar panel efficiency 2024", num_results=5, category="research paper")\n'
        '    web_search("python asyncio timeout", include_domains=["docs.python.org"])',
        {
            "query": string_param("What to search for."),
            "num_results": integer_param("Number of results, 1 to 100. Default 10."),
            "category": enum_param(
                [
                    "company",
                    "research paper",
                    "news",
                    "pdf",
                    "github",
                    "tweet",
                    "personal site",
                    "linkedin profile",
                    "financial report",
                ],
                "Restrict results to one kind of content.",
            ),
            "include_text": {
                "type": "boolean",
                "description": "Return the full page text instead of highlights and a summary. Default false, "
                "because full pages quickly fill the context window.",
            },
            "include_domains": strings_param("Only return results from these domains."),
            "exclude_domains": strings_param("Never return results from these domains."),
            "start_published_date": string_param("Only content published after this date (ISO 8601)."),
            "end_published_date": string_param("Only content published before this date (ISO 8601)."),
            "user_location": string_param('Two-letter country code to localise results, e.g. "US".'),
        },
        ["query"],
        parallel=True,
    ),
    ToolEntry(
        "fetch_webpage",
        LETTA_BUILTIN,
        "Download a web page and return its content as markdown or plain text.",
        {"url": string_param("Address of the page to fetch.")},
        ["url"],
        parallel=True,
    ),
]
