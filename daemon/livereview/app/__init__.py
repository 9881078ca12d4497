"""The wiring (docs/DESIGN.md §2): the only place that turns settings into a store, host adapters,
the scheduler and the two workflows (daemon.py), the tools' toolbox (wiring.py), the
adapters (hosts.py), and the AI side of a local review (local_respond.py)."""
