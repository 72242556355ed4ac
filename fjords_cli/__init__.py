"""The ``fjords`` command line: one entry point gathering every subcommand."""
