"""The pure core (docs/DESIGN.md §2): the model, triggers, lessons, Markdown and sanitizing, answer
parsing, local-review notes and model, review findings, placement and verdicts. Standard
library and itself only, besides two pure parsers (markdown-it, unidiff); no I/O, settings,
metrics or logging — import-linter holds it to that."""
