"""Persistence: SQLModel tables, engine, migrations, and row ⇄ model conversion."""
