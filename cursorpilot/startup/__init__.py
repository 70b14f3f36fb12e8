"""How `cursor-pilot` starts: the entry point (start.py: a plain run's program starts first), its options read without
typer (commands/runargs.py, where `run`'s options are declared), the resident pilot that serves a run warm (warmstart.py,
pilotd.py) and what the residents share (daemons.py), and why a program would not start (channels/executable.py).

Stdlib only at import, and no SDK (lint-imports): all of it runs before a run's program starts.
"""
