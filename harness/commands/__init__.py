"""One module per CLI subcommand: DESCRIPTION, add_arguments(parser), run(args) -> exit code."""
