"""Snapshot diffing (pure) and the poller that decides what to fetch when."""
