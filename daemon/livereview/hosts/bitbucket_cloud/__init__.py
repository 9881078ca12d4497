"""Bitbucket Cloud (REST 2.0): adapter, payloads, reviews, access notes, quota
(docs/DESIGN.md §3)."""
