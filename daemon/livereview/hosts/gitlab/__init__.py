"""GitLab (REST v4): the adapter, its payloads and its reviews (DESIGN §3)."""
