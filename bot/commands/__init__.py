"""One module per CLI sub-command; each exposes `NAME`, `HELP`, `add_arguments(parser)` and `run(args) -> int`."""
