"""The bodies of the command line's commands: cli.py declares the commands, their options and their help, and hands
each to a function here. Each module is imported when its command runs (never by `cursor-pilot --version`)."""
