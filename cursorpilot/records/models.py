"""Every transcript record type, once: its name, its fields and what it means.

Writers build these models and hand them to the transcript (`tx.write(R.PolicyDenied(policy_rule=..., ...))`, or a
pilot's `Record(R.Answer(...))` effect): mypy checks each field where it is written. This module is the one place that
says which types exist and what they carry, so its readers (the report, the docs, the tests) can't drift from what is
written; `records/reading.py` reads transcripts through it and generates `docs/records.md` from it. There is no other way
to write a record: neither the transcript nor a pilot's Record takes a type's name and a dict.

Writing is checked, reading is forgiving. A field every writer gives is required (no default: mypy refuses a writer
that leaves it out, and the tests' strict check a record written without it); a field only some writers give (a
record's `step`, where a pilot leaves it to its loop) or that came later than its record has a default. A required
field stays `X | None`, for the transcripts older versions wrote without it: a reader gets None there, as before
(records_read.parse). Newer transcripts may carry fields this version does not know (kept, `extra="allow"`); a
record whose shape does not fit its declaration, or whose type is unknown, is read as a plain `Rec` and counted,
never a crash.
A record flagged `secret: true` is masked as it is written (transcript.py) and again when read, whatever its writer
left in it.

A written model is built, not validated (a field a writer gets wrong never crashes a run: mypy and each test's
transcript check catch it), and its schema is built only when something reads with it: importing this module costs
its class definitions, not their validators (start-up time: every run writes through it).
"""

# The declarations, in the order docs/records.md lists them (each module registers its types as it is imported).
from cursorpilot.records.base import *  # noqa: F403
from cursorpilot.records.base import OMIT, TYPES, NAMES, COMMON, Rec, body, declare, masked, mask_secrets, name_of, numbered  # noqa: F401
from cursorpilot.records.run import *  # noqa: F403
from cursorpilot.records.screen import *  # noqa: F403
from cursorpilot.records.decisions import *  # noqa: F403
from cursorpilot.records.agents import *  # noqa: F403
