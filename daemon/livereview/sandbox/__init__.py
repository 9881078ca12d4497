"""Sandbox: an in-memory fake GitLab for end-to-end tests and `livereview demo`."""
