"""The fake GitHub (REST v3 and the GraphQL review threads): model, state, payloads,
routes, server."""
