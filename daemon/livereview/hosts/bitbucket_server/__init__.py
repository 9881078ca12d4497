"""Bitbucket Server / Data Center (REST 1.0): adapter, payloads, reviews (docs/DESIGN.md §3)."""
