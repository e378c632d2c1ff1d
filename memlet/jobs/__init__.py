"""Jobs: background work that is not one agent turn (message batches), and their batch items."""
