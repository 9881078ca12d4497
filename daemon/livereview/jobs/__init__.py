"""What the two workflows (reply/, review/) share (docs/DESIGN.md §2): running due work in bounded
slots, the claims that keep one answer per trigger, the model client, the repository's
knowledge, and how a failure is described."""
