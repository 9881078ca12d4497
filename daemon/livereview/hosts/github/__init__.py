"""GitHub (REST v3, GraphQL for review threads): the adapter, payloads, reviews
(docs/DESIGN.md §3)."""
