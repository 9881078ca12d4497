"""One function per merge-request operation, over hosts and the store (docs/DESIGN.md §13).

`livereview mr …` (cli/mr.py) and `livereview mcp` (mcp/server.py) only parse, call these and
render their typed results: no host logic lives in a face. Reads: comments (with the
replied filter), diffstat, diff, file, replied. Writes (refused unless the host's
`agent_writes` is on): reply, comment, approve, unapprove, request_changes.
"""
