"""Built-in file tools: open_files, grep_files and semantic_search_files, over the files an agent has attached.

Their return texts follow Letta 0.16.8's, which models were prompted with. `open_files` changes what the agent's
file blocks show, so it marks the context for a system prompt recompile when the step commits.
"""

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from memlet.db import models as orm
from memlet.errors import MemletError
from memlet.folders import line_view
from memlet.folders.agent_files import AgentFiles, file_limits
from memlet.folders.file_agent_repository import FileAgentRepository
from memlet.folders.file_repository import FileRepository
from memlet.folders.repository import FolderRepository
from memlet.loop.builtin_tools import BuiltinTool, ToolContext, ToolError
from memlet.passages.repository import PassageFilters, PassageRepository, PassageScope
from memlet.passages.service import PassageService

MAX_PATTERN_CHARS = 1000
GREP_PAGE_SIZE = 20
MAX_GREP_MATCHES = 1000
GREP_TIMEOUT_S = 30
MAX_SEMANTIC_RESULTS = 50
PASSAGE_LINES = 20


def _requests(file_requests: Any) -> list[tuple[str, int | None, int | None]]:
    if not isinstance(file_requests, list):
        raise ToolError("file_requests must be a list of {file_name, offset, length} objects")
    parsed = []
    for item in file_requests:
        if not isinstance(item, dict) or not isinstance(item.get("file_name"), str):
            raise ToolError(f"Invalid file request: {item!r}. Expected an object with a file_name.")
        offset, length = _whole_number(item.get("offset")), _whole_number(item.get("length"))
        if offset is not None and (not isinstance(offset, int) or offset < 0):
            raise ToolError(f"Offset for file {item['file_name']} must be >= 0 (0-indexed), got {offset}")
        if length is not None and (not isinstance(length, int) or length < 1):
            raise ToolError(f"Length for file {item['file_name']} must be >= 1, got {length}")
        parsed.append((item["file_name"], offset, length))
    return parsed


def _whole_number(value: Any) -> Any:
    """A line number as the model sent it, converted as Letta's request model converts it ("5" and 5.0 are 5);
    anything else is left for the range checks to refuse."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return value


def _range_text(offset: int | None, length: int | None) -> str:
    if offset is not None and length is not None:
        return f" (lines {offset + 1}-{offset + length})"
    if offset is not None:
        return f" (lines {offset + 1}-end)"
    return ""


def _previous_text(previous: tuple[int | None, int | None] | None) -> str:
    if previous is None:
        return ""
    start, end = previous
    if start is not None and end is not None:
        return f" (previously lines {start}-{end})"
    return f" (previously lines {start}-end)" if start is not None else " (previously full file)"


async def open_files(ctx: ToolContext, file_requests: list[dict[str, Any]], close_all_others: bool = False) -> str:
    """Open files (or line windows of them) into the agent's file blocks, closing least recently used ones."""
    requests = _requests(file_requests)
    max_open, _ = file_limits(ctx.agent)
    if len(requests) > max_open:
        raise ToolError(f"Cannot open {len(requests)} files: exceeds configured maximum limit of {max_open} files")
    if not requests:
        raise ToolError("No file requests provided")
    names = [name for name, _, _ in requests]
    summaries, evicted, closed_by_request = [], [], []
    async with ctx.sessionmaker() as session, session.begin():
        rows, files = FileAgentRepository(session), FileRepository(session)
        attached = [r.file_name for r in await rows.of_agent(ctx.agent.id)]
        if close_all_others:
            closed_by_request = await rows.close_all_except(ctx.agent.id, names)
        for name, offset, length in requests:
            link = await rows.find_by_name(ctx.agent.id, name)
            meta = await files.find(ctx.agent.organization_id, link.file_id) if link is not None else None
            if link is None or meta is None:
                raise ToolError(
                    f"{name} not attached - did you get the filename correct? "
                    f"Currently you have the following files attached: {attached}"
                )
            # As in Letta, a length without an offset opens the whole file.
            start = offset
            end = start + length if start is not None and length is not None else None
            text = (await files.texts([meta.id])).get(meta.id) or ""
            try:
                view = line_view.window(text, meta.file_type, meta.file_name, start, end)
            except line_view.LineRangeError as exc:
                raise ToolError(str(exc)) from exc
            first = start + 1 if start is not None else None
            opened = await AgentFiles(session).open(ctx.agent, meta, view, start_line=first, end_line=end)
            evicted.extend(opened.closed)
            summaries.append(f"{name}{_range_text(offset, length)}{_previous_text(opened.previous_range)}")
        await rows.mark_access(ctx.agent.id, names)
    ctx.files_changed = True
    message = (
        f"* Opened {summaries[0]}"
        if len(summaries) == 1
        else f"* Opened {len(summaries)} files: {', '.join(summaries)}"
    )
    if closed_by_request:
        message += (
            f"\nNote: Closed {len(closed_by_request)} file(s) due to close_all_others=True: "
            f"{', '.join(closed_by_request)}"
        )
    if evicted:
        message += (
            f"\nNote: Closed {len(evicted)} least recently used file(s) due to open file limit: {', '.join(evicted)}"
        )
    return message


Pattern = Any  # a compiled `regex` pattern (the module ships no type information)
INCLUDE_TIMEOUT_S = 1.0


def _compile(pattern: str, what: str = "regex pattern") -> Pattern:
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolError(f"Pattern too complex: {len(pattern)} chars > {MAX_PATTERN_CHARS} limit")
    # `re` compatible, but a match can time out and runs without the GIL: a pattern with catastrophic backtracking
    # (`(a|aa)+$`) would otherwise hold the GIL and freeze the whole server long after the tool gave up on it.
    # Imported here (~1.4 MB): only a server whose agents grep files loads it.
    import regex

    try:
        return regex.compile(pattern, regex.IGNORECASE | regex.MULTILINE)
    except regex.error as exc:
        raise ToolError(f"Invalid {what}: {exc}") from exc


def _matches(compiled: Pattern, text: str, deadline: float) -> bool:
    """Whether `compiled` matches in `text`; TimeoutError past `deadline` (time.monotonic())."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError
    return compiled.search(text, concurrent=True, timeout=remaining) is not None


def _include_regex(include: str | None) -> Pattern | None:
    if not include or not include.strip():
        return None
    include = include.strip()
    if "*" in include and not any(c in include for c in "^$()[]{}\\+"):
        include = include.replace(".", r"\.").replace("*", ".*").replace("?", ".") + "$"
    return _compile(include, "include pattern")


def _grep_file(
    name: str, lines: list[str], compiled: Pattern, room: int, deadline: float
) -> list[tuple[str, int, list[str]]]:
    """The file's matches as (name, line number, the file's lines): a page's context is cut when it is shown."""
    found: list[tuple[str, int, list[str]]] = []
    for index, line in enumerate(lines):
        if len(found) >= room:
            break
        if _matches(compiled, line.strip(), deadline):  # code keeps its indentation, but is matched without it
            found.append((name, index + 1, lines))
    return found


def _context(lines: list[str], number: int, context: int) -> list[str]:
    """`context` lines either side of line `number`, the match marked; nothing for a negative count, as in Letta
    (which sets no upper bound: the block is cut here, only for the matches on the page shown)."""
    if context < 0:
        return []
    index = number - 1
    shown = range(max(0, index - context), min(len(lines), index + context + 1))
    return [f"{'>' if i == index else ' '} {i + 1}: {lines[i]}" for i in shown]


async def _attached_texts(ctx: ToolContext) -> list[tuple[orm.FileAgent, orm.FileMetadata | None, str]]:
    async with ctx.sessionmaker() as session:
        links = await FileAgentRepository(session).of_agent(ctx.agent.id)
        files = FileRepository(session)
        texts = await files.texts([link.file_id for link in links]) if links else {}
        return [
            (link, await files.find(ctx.agent.organization_id, link.file_id), texts.get(link.file_id) or "")
            for link in links
        ]


async def grep_files(
    ctx: ToolContext,
    pattern: str,
    include: str | None = None,
    context_lines: int | None = 1,
    offset: int | None = None,
) -> str:
    """Regex search over the attached files' lines, 20 matches a page with context lines."""
    if not pattern or not pattern.strip():
        raise ToolError("Empty search pattern provided")
    pattern = pattern.strip()
    compiled, include_regex = _compile(pattern), _include_regex(include)
    attached = await _attached_texts(ctx)
    if not attached:
        return "No files are currently attached to search"
    if include_regex is not None:
        total = len(attached)
        try:
            deadline = time.monotonic() + INCLUDE_TIMEOUT_S
            attached = [a for a in attached if _matches(include_regex, a[0].file_name, deadline)]
        except TimeoutError as exc:
            raise ToolError(f"Include pattern timed out after {INCLUDE_TIMEOUT_S} seconds") from exc
        if not attached:
            return f"No files match the filename pattern '{include}' (filtered {total} files)"
    context = context_lines or 0

    deadline = time.monotonic() + GREP_TIMEOUT_S

    def search() -> list[tuple[str, int, list[str]]]:
        matches: list[tuple[str, int, list[str]]] = []
        for link, meta, text in attached:
            lines, _ = line_view.file_lines(text, meta.file_type if meta else None, link.file_name)
            matches += _grep_file(link.file_name, lines, compiled, MAX_GREP_MATCHES - len(matches), deadline)
        return matches

    try:
        matches = await asyncio.wait_for(asyncio.to_thread(search), GREP_TIMEOUT_S + 1)
    except TimeoutError as exc:
        raise ToolError(f"Search timed out after {GREP_TIMEOUT_S} seconds") from exc
    matched_files = list(dict.fromkeys(name for name, _, _ in matches))
    async with ctx.sessionmaker() as session, session.begin():
        await FileAgentRepository(session).mark_access(ctx.agent.id, matched_files)
    return _grep_report(pattern, include, matches, matched_files, max(offset or 0, 0), context)


def _grep_report(
    pattern: str,
    include: str | None,
    matches: Sequence[tuple[str, int, list[str]]],
    files: list[str],
    start: int,
    context: int,
) -> str:
    if not matches:
        return f"No matches found for pattern: '{pattern}'" + (f" in files matching '{include}'" if include else "")
    total, capped = len(matches), len(matches) >= MAX_GREP_MATCHES
    end = start + GREP_PAGE_SIZE
    count = f"{MAX_GREP_MATCHES}+" if capped else str(total)
    out = [
        f"Found {count} total matches across {len(files)} files "
        f"(showing matches {start + 1}-{min(end, total)} of {count})",
        "=" * 80,
        "\nFiles with matches:",
    ]
    per_file = {name: sum(1 for m in matches if m[0] == name) for name in files}
    out += [f"  - {name}: {n} matches" for name, n in sorted(per_file.items(), key=lambda kv: kv[1], reverse=True)]
    out.append("")
    out += [
        f"\n=== {name}:{number} ===\n" + "\n".join(_context(lines, number, context))
        for name, number, lines in matches[start:end]
    ]
    out.append("")
    if end < total:
        out.append(f'To see more matches, call: grep_files(pattern="{pattern}", offset={end})')
        if capped:
            out.append(
                f"Note: Only the first {MAX_GREP_MATCHES} matches were collected. "
                "There may be more matches beyond this limit."
            )
    elif capped:
        out.append("Showing last page of collected matches. There may be more matches beyond the collection limit.")
    else:
        out.append("No more matches to show.")
    return "\n".join(out)


async def semantic_search_files(ctx: ToolContext, query: str, limit: int = 5) -> str:
    """Nearest passages of the attached folders' files to `query` (by each folder's embedding model)."""
    if not query or not query.strip():
        raise ToolError("Empty search query provided")
    query, limit = query.strip(), max(1, min(limit or 5, MAX_SEMANTIC_RESULTS))
    try:
        hits = await _search_passages(ctx, query, limit)
    except MemletError as exc:
        raise ToolError(exc.message) from exc
    if not hits:
        return f"No semantic matches found for query: '{query}'"
    by_file: dict[str, list[str]] = {}
    for row in hits:
        by_file.setdefault(row.file_name or "Unknown File", []).append(row.text)
    out, number = [], 0
    for name, texts in by_file.items():
        for text in texts:
            number += 1
            lines = text.strip().splitlines()
            body = [f"  {line}" for line in lines[:PASSAGE_LINES]]
            if len(lines) > PASSAGE_LINES:
                body.append(f"  ... [truncated {len(lines) - PASSAGE_LINES} more lines]")
            out.append(f"\n=== {name} (passage #{number}) ===\n" + "\n".join(body))
    async with ctx.sessionmaker() as session, session.begin():
        await FileAgentRepository(session).mark_access(ctx.agent.id, [n for n in by_file if n != "Unknown File"])
    summary = (
        f"Found {number} semantic matches in {len(by_file)} file{'s' if len(by_file) != 1 else ''} for query: '{query}'"
    )
    return "\n".join([summary, "=" * len(summary), *out])


async def _search_passages(ctx: ToolContext, query: str, limit: int) -> list[orm.Passage]:
    async with ctx.sessionmaker() as session, session.begin():
        folders = await FolderRepository(session).of_agent(ctx.agent.id)
        by_config: dict[str, tuple[dict[str, Any], list[str]]] = {}
        for folder in folders:
            key = repr(sorted((folder.embedding_config or {}).items()))
            by_config.setdefault(key, (folder.embedding_config or {}, []))[1].append(folder.id)
        passages, service = PassageRepository(session), PassageService(session, ctx.embedder)
        hits: list[tuple[orm.Passage, float]] = []
        for config, source_ids in by_config.values():
            scope = PassageScope(source_ids=source_ids)
            vector = (await service.embed(ctx.actor, config or None, [query]))[0]
            if vector is None:
                found = await passages.text_search(ctx.agent.organization_id, scope, PassageFilters(), query, limit)
                hits += [(row, 1.0 - rank) for row, rank in found]
            else:
                hits += await passages.nearest(ctx.agent.organization_id, scope, PassageFilters(), vector, limit)
    return [row for row, _ in sorted(hits, key=lambda hit: hit[1])[:limit]]


FILE_TOOLS: dict[str, BuiltinTool] = {
    "open_files": open_files,
    "grep_files": grep_files,
    "semantic_search_files": semantic_search_files,
}
