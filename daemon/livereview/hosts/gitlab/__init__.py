"""GitLab (REST v4): the adapter, its payloads and its reviews (docs/DESIGN.md §3)."""
