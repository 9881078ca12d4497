"""Reviews: the bot reads an MR's diff, posts findings as inline threads, a summary with a
verdict, and tells the author (issue 14; docs/DESIGN.md §11)."""
