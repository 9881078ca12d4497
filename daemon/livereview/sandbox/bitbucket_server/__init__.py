"""The fake Bitbucket Server / Data Center (REST 1.0): model, state, payloads, routes, HTTP."""
