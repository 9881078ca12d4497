"""`livereview mcp`, a face over the same tools as the command line (docs/DESIGN.md §13):
the MR tools (server.py) and the local-review tools (local.py)."""
