"""The fake GitLab (REST v4, as documented by GitLab): model, state, payloads, routes, server."""
