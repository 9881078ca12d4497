"""Bitbucket Server / Data Center (REST 1.0): adapter, payloads, reviews (DESIGN §3)."""
