"""Letta's built-in tools as data: name, tool type, description and parameters of each, in Letta's order.

Tool names, tool types, parameter names, types, enums and required lists are the contract with Letta clients and
match Letta 0.16.8. The descriptions (the text the LLM reads) are memlet's own wording of the same guidance.
``memlet.tools.base_tools`` turns these entries into ``BaseToolSpec``s; their behaviour lives in ``memlet.tool_exec``.
"""

from collections.abc import Sequence
from typing import Any, NamedTuple

LETTA_CORE = "letta_core"
LETTA_MEMORY_CORE = "letta_memory_core"
LETTA_SLEEPTIME_CORE = "letta_sleeptime_core"
LETTA_MULTI_AGENT_CORE = "letta_multi_agent_core"
LETTA_VOICE_SLEEPTIME_CORE = "letta_voice_sleeptime_core"
LETTA_BUILTIN = "letta_builtin"
LETTA_FILES_CORE = "letta_files_core"


class ToolEntry(NamedTuple):
    """One built-in tool; ``properties`` and ``required`` become its JSON schema's ``parameters``."""

    name: str
    tool_type: str
    description: str
    properties: dict[str, Any] | None = None
    required: Sequence[str] = ()
    parallel: bool = False


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _integer(description: str) -> dict[str, Any]:
    return {"type": "integer", "description": description}


def _strings(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def _enum(values: list[str], description: str) -> dict[str, Any]:
    return {"type": "string", "enum": values, "description": description}


_LABEL = "Label of the memory block to edit."
_NO_LINE_NUMBERS = "Leave out the line-number prefixes shown in the memory view."
_ANOTHER_AGENT = "ID of the Letta agent that should receive the message."

BASE_TOOL_CATALOG: list[ToolEntry] = [
    ToolEntry(
        "send_message",
        LETTA_CORE,
        "Send a message to the user.",
        {"message": _string("The text to show the user. Any unicode, emoji included, is fine.")},
        ["message"],
    ),
    ToolEntry(
        "conversation_search",
        LETTA_CORE,
        "Look through earlier messages of this conversation, matching both the words and the meaning of a query."
        "\n\nEvery filter is optional; with no query, the date range and roles alone select the messages."
        "\n\nExamples:\n"
        '    conversation_search(query="travel plans")\n'
        '    conversation_search(query="bug", roles=["user"], limit=10)\n'
        '    conversation_search(query="standup", start_date="2024-03-01", end_date="2024-03-07")\n'
        '    conversation_search(start_date="2024-03-05T08:00", end_date="2024-03-05T12:00")',
        {
            "query": _string("Text to look for, matched by keywords and by meaning. Omit it to filter only."),
            "roles": {
                "type": "array",
                "items": {"type": "string", "enum": ["assistant", "user", "tool"]},
                "description": "Keep only messages from these roles.",
            },
            "limit": _integer("Largest number of results to return; the server default applies when omitted."),
            "start_date": _string(
                'Earliest creation time to include, inclusive. ISO 8601 "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM"; '
                "a bare date starts at 00:00 of that day."
            ),
            "end_date": _string(
                'Latest creation time to include, inclusive. ISO 8601 "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM"; '
                "a bare date covers that whole day."
            ),
        },
        parallel=True,
    ),
    ToolEntry(
        "archival_memory_insert",
        LETTA_CORE,
        "Save a piece of information to long-term archival memory so it can be found again later."
        "\n\nArchival memory lasts across every future conversation and is searched by meaning. Store "
        "self-contained facts or summaries rather than fragments of chat, and tag them to make retrieval easier."
        "\n\nExamples:\n"
        '    archival_memory_insert(content="2024-05-02: the team chose Postgres for the event store.", '
        'tags=["decisions", "database"])',
        {
            "content": _string("The information to keep, written so it makes sense on its own."),
            "tags": _strings('Category tags for the entry, e.g. ["meetings", "roadmap"].'),
        },
        ["content"],
    ),
    ToolEntry(
        "archival_memory_search",
        LETTA_CORE,
        "Find entries in long-term archival memory that are related in meaning to a query."
        "\n\nDescribe what you are looking for in plain words; results come back ranked by relevance. Use tags "
        "and the time window to narrow a broad search."
        "\n\nExamples:\n"
        '    archival_memory_search(query="decisions about the database", tags=["decisions"])\n'
        '    archival_memory_search(query="roadmap talks", tags=["meetings", "roadmap"], tag_match_mode="all", '
        'start_datetime="2024-01-01", end_datetime="2024-03-31")',
        {
            "query": _string('What to look for, in natural language (e.g. "notes on the API redesign").'),
            "tags": _strings("Only return entries carrying these tags; see tag_match_mode."),
            "tag_match_mode": _enum(
                ["any", "all"], '"any": an entry needs one of the tags; "all": it needs every tag.'
            ),
            "top_k": _integer("Largest number of results to return."),
            "start_datetime": _string('Only entries created after this time (ISO 8601, e.g. "2024-01-15T14:30").'),
            "end_datetime": _string("Only entries created before this time (ISO 8601)."),
        },
        ["query"],
        parallel=True,
    ),
    ToolEntry(
        "core_memory_append",
        LETTA_MEMORY_CORE,
        "Add text to the end of a core memory block.",
        {"label": _string(_LABEL), "content": _string("Text to append. Any unicode, emoji included, is fine.")},
        ["label", "content"],
    ),
    ToolEntry(
        "core_memory_replace",
        LETTA_MEMORY_CORE,
        "Replace text in a core memory block. Pass an empty new_content to delete the old text.",
        {
            "label": _string(_LABEL),
            "old_content": _string("The exact text to replace."),
            "new_content": _string("The replacement text. Any unicode, emoji included, is fine."),
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
            "command": _string(
                'One of "create" (make a new block), "str_replace" (replace text in a block), "insert" '
                '(add text at a line), "delete" (remove a block) or "rename" (change a block\'s path or description).'
            ),
            "path": _string("Path of the block to act on (create, str_replace, insert, delete)."),
            "file_text": _string("Initial value of the new block (create)."),
            "description": _string("Description of the block (create, rename)."),
            "old_string": _string("Text to replace (str_replace)."),
            "new_string": _string("Replacement text (str_replace)."),
            "insert_line": _integer("Line number to insert at (insert)."),
            "insert_text": _string("Text to insert (insert)."),
            "old_path": _string("Current path of the block (rename)."),
            "new_path": _string("New path of the block (rename)."),
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
            "label": _string(
                'Block to patch in single-block mode. Use an empty string "" when the patch carries "***" headers.'
            ),
            "patch": _string('The patch: a plain diff for one block, or a multi-block patch with "***" headers.'),
        },
        ["label", "patch"],
    ),
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
            "label": _string(_LABEL),
            "old_string": _string("The exact text to replace, whitespace and indentation included."),
            "new_string": _string(f"The text to put in its place. {_NO_LINE_NUMBERS}"),
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
            "label": _string(_LABEL),
            "new_string": _string(f"The text to insert. {_NO_LINE_NUMBERS}"),
            "insert_line": _integer("Insert after this line; 0 puts the text first. The default -1 appends it."),
        },
        ["label", "new_string"],
    ),
    ToolEntry(
        "memory_rethink",
        LETTA_SLEEPTIME_CORE,
        "Rewrite a memory block completely. Use it for large reorganisations or condensing a block, not for "
        "small edits such as changing one line.",
        {
            "label": _string("Label of the memory block to rewrite."),
            "new_memory": _string("The full new contents, merging what is still true with what was learned."),
        },
        ["label", "new_memory"],
    ),
    ToolEntry(
        "memory_finish_edits",
        LETTA_SLEEPTIME_CORE,
        "Signal that you have finished editing the memory blocks and have integrated all new information.",
    ),
    ToolEntry(
        "send_message_to_agent_and_wait_for_reply",
        LETTA_MULTI_AGENT_CORE,
        "Send a message to another Letta agent in the same organization and wait for its reply. Your identity "
        "is attached automatically, so no introduction is needed.",
        {"message": _string("The message for the other agent."), "other_agent_id": _string(_ANOTHER_AGENT)},
        ["message", "other_agent_id"],
    ),
    ToolEntry(
        "send_message_to_agents_matching_tags",
        LETTA_MULTI_AGENT_CORE,
        "Send a message to every agent in the organization that has all tags in match_all and at least one tag "
        "in match_some, and collect their replies.",
        {
            "message": _string("The message for each matching agent."),
            "match_all": _strings("Tags an agent must all have."),
            "match_some": _strings("Tags of which an agent must have at least one."),
        },
        ["message", "match_all", "match_some"],
    ),
    ToolEntry(
        "send_message_to_agent_async",
        LETTA_MULTI_AGENT_CORE,
        "Send a message to another Letta agent in the same organization without waiting for a reply, e.g. a "
        "notification. Your identity is attached automatically.",
        {"message": _string("The message for the other agent."), "other_agent_id": _string(_ANOTHER_AGENT)},
        ["message", "other_agent_id"],
    ),
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
                        "file_name": _string("Name of the file to open, including its folder."),
                        "offset": _integer("First line to show, counted from 0. Omit to start at the top."),
                        "length": _integer("Number of lines to show from offset. Omit to show the rest."),
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
            "pattern": _string("Keyword or regular expression to find in file contents."),
            "include": _string("Keyword or regular expression that file names must match."),
            "context_lines": _integer("Lines of context before and after each match (like grep -C). Default 1."),
            "offset": _integer("Number of matches to skip, for paging: 0 for the first page, 20 for the second."),
        },
        ["pattern"],
        parallel=True,
    ),
    ToolEntry(
        "semantic_search_files",
        LETTA_FILES_CORE,
        "Search attached files by meaning rather than exact words, to find related passages when you do not "
        "know the exact terms.",
        {"query": _string("What to look for, in natural language."), "limit": _integer("Most results to return.")},
        ["query"],
        parallel=True,
    ),
    ToolEntry(
        "run_code",
        LETTA_BUILTIN,
        "Run a snippet of Python, JavaScript, TypeScript, R or Java in a sandbox and return its output.",
        {
            "code": _string("The code to run."),
            "language": _enum(["python", "js", "ts", "r", "java"], "Language of the code."),
        },
        ["code", "language"],
        parallel=True,
    ),
    ToolEntry(
        "run_code_with_tools",
        LETTA_BUILTIN,
        "Run Python code that may call this agent's tools directly as functions.",
        {"code": _string("The Python code to run.")},
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
            "query": _string("What to search for."),
            "num_results": _integer("Number of results, 1 to 100. Default 10."),
            "category": _enum(
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
            "include_domains": _strings("Only return results from these domains."),
            "exclude_domains": _strings("Never return results from these domains."),
            "start_published_date": _string("Only content published after this date (ISO 8601)."),
            "end_published_date": _string("Only content published before this date (ISO 8601)."),
            "user_location": _string('Two-letter country code to localise results, e.g. "US".'),
        },
        ["query"],
        parallel=True,
    ),
    ToolEntry(
        "fetch_webpage",
        LETTA_BUILTIN,
        "Download a web page and return its content as markdown or plain text.",
        {"url": _string("Address of the page to fetch.")},
        ["url"],
        parallel=True,
    ),
    ToolEntry(
        "search_memory",
        LETTA_VOICE_SLEEPTIME_CORE,
        "Search long-term and earlier conversation memory, only when the user refers to something that is not "
        "in the visible context. The user's latest message is used as the main query automatically.",
        {
            "convo_keyword_queries": _strings("Extra keywords such as an order number or a place; null if none."),
            "start_minutes_ago": _integer("Newest end of the time window, in minutes ago; null for no bound."),
            "end_minutes_ago": _integer("Oldest end of the time window, in minutes ago; null for no bound."),
        },
    ),
    ToolEntry(
        "store_memories",
        LETTA_VOICE_SLEEPTIME_CORE,
        "Save the conversation lines that are about to leave the context window.",
        {
            "chunks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "start_index": _integer("Index, from 0, of the first evicted line in the chunk."),
                        "end_index": _integer("Index, from 0, of the last evicted line in the chunk (inclusive)."),
                        "context": _string(
                            "One to three sentences on the facts, preferences or goals the chunk reveals, "
                            "written to be found by a later search."
                        ),
                    },
                    "required": ["start_index", "end_index", "context"],
                },
                "description": "Runs of consecutive evicted lines, each with a short summary to embed for search.",
            }
        },
        ["chunks"],
    ),
    ToolEntry(
        "rethink_user_memory",
        LETTA_VOICE_SLEEPTIME_CORE,
        "Rewrite the main agent's user memory block: keep what is still accurate, fold in new information, and "
        "leave it organised and complete.",
        {"new_memory": _string("The full new block value; repeat the current value if nothing is new.")},
        ["new_memory"],
    ),
    ToolEntry(
        "finish_rethinking_memory",
        LETTA_VOICE_SLEEPTIME_CORE,
        "Signal that you are done rewriting memory.",
    ),
]
