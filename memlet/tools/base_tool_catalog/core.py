"""`letta_core` tools: answering the user, and searching the conversation history and archival memory."""

from memlet.tools.base_tool_catalog.entry import (
    LETTA_CORE,
    ToolEntry,
    enum_param,
    integer_param,
    string_param,
    strings_param,
)

CORE_TOOLS: list[ToolEntry] = [
    ToolEntry(
        "send_message",
        LETTA_CORE,
        "Send a message to the user.",
        {"message": string_param("The text to show the user. Any unicode, emoji included, is fine.")},
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
            "query": string_param("Text to look for, matched by keywords and by meaning. Omit it to filter only."),
            "roles": {
                "type": "array",
                "items": {"type": "string", "enum": ["assistant", "user", "tool"]},
                "description": "Keep only messages from these roles.",
            },
            "limit": integer_param("Largest number of results to return; the server default applies when omitted."),
            "start_date": string_param(
                'Earliest creation time to include, inclusive. ISO 8601 "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM"; '
                "a bare date starts at 00:00 of that day."
            ),
            "end_date": string_param(
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
            "content": string_param("The information to keep, written so it makes sense on its own."),
            "tags": strings_param('Category tags for the entry, e.g. ["meetings", "roadmap"].'),
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
            "query": string_param('What to look for, in natural language (e.g. "notes on the API redesign").'),
            "tags": strings_param("Only return entries carrying these tags; see tag_match_mode."),
            "tag_match_mode": enum_param(
                ["any", "all"], '"any": an entry needs one of the tags; "all": it needs every tag.'
            ),
            "top_k": integer_param("Largest number of results to return."),
            "start_datetime": string_param('Only entries created after this time (ISO 8601, e.g. "2024-01-15T14:30").'),
            "end_datetime": string_param("Only entries created before this time (ISO 8601)."),
        },
        ["query"],
        parallel=True,
    ),
]
