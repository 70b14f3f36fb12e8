"""A run: its steps in order (run.py), what it is given (spec.py), what it records of its folder at its start
(atstart.py)."""
