"""`cursor-pilot fleet`: many runs at once (docs/fleet.md). model.py (the fleet file), command.py (a task as the
`cursor-pilot run` that does it), scheduler.py (the rules, pure, with facts.py), unit.py (one task where it runs, read
through watch.py), local.py and ray_engine.py (the engines), inbox.py (one decision page for the fleet), manifest.py and
report.py (what it leaves), runner.py (the sequencing)."""
