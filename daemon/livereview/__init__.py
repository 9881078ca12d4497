"""livereview: an AI reviewer that holds conversations in merge requests, by polling."""

__version__ = "0.1.0"
