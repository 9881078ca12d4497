"""The command line (docs/DESIGN.md §7), a face: parse, call the tools or the app, render.
The entry point is commands.main; this package imports nothing, so loading one command's
module (cli.mr, cli.local, cli.arg_types) does not load the whole command line."""
