"""Reviews: the bot reads an MR's diff, posts findings as inline threads, a summary with a
verdict, and tells the author (docs/DESIGN.md §11)."""
