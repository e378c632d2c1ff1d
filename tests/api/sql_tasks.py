"""Telling a request's SQL from the live server's background work, for tests that count statements.

The in-process server's request handlers run in uvicorn's unnamed tasks ("Task-<n>"). Its background work runs in
named tasks (the run-lease sweep, the sleeptime queue's poll, the message indexer, a run's turn and chunk log), except
the shared cancel watch, an unnamed task too, known by its one statement.
"""

import asyncio

CANCEL_POLL = "FROM runs WHERE runs.id = ANY"  # the cancel watch's one statement for every run in flight


def task_name() -> str:
    """The name of the task sending a statement ("" outside one)."""
    task = asyncio.current_task()
    return task.get_name() if task is not None else ""


def is_cancel_poll(sql: str) -> bool:
    return CANCEL_POLL in " ".join(sql.split())
