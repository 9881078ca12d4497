"""A local repository seen as a host: git, the pure view, the adapter (docs/DESIGN.md §14)."""
