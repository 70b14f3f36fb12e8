"""What the two agent channels (acp/, headless/) share, said once: their common facts (facts.py), the pilot's base
(pilot.py) and its waits (waits.py: a usage limit, a stuck turn), the loop's base (loop.py), and the agents' own deny
lists (nativedeny.py)."""
