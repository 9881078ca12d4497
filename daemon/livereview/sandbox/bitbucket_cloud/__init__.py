"""The fake Bitbucket Cloud (REST 2.0): model, state, payloads, query language, routes, server."""
