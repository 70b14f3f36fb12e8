"""What a run leaves, and reading it back: the transcript (transcript.py) and its record models (models.py, reading.py),
the raw recording (recording.py), the manifest (manifest.py) and resuming from it (resume.py), redaction (redact.py) and
secrets (secret.py), and where runs are kept (pastruns.py). It imports nothing above it (lint-imports): a run's records
are read by the report, `runs` and `detect` without any channel.

Light on purpose: a run's start imports secret.py before its program starts (startup/start.py), so this imports nothing.
"""
