"""``python -m tests.mock_llm --port N``: the mock in the foreground, scripted over HTTP."""

from tests.mock_llm.server import main

main()
