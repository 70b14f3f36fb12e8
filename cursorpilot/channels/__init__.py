"""How a program is reached, one folder per channel: `pty/` (a screen on a pseudo-terminal), `acp/` (the Agent Client
Protocol), `headless/` (an agent's print mode), `shell.py` (a plan's `run:` steps, nothing to answer); `agent/` is what
the two agent channels share (their common facts, the pilot's and the loop's base, the agents' own deny lists).

Beside them, what every channel is handed and shares: `contract.py` (a Job in, a StepResult out), `registry.py` (which
channel drives each kind of step, and what a channel is), `host.py` (the StepHost every loop carries its shared effects
out with), `goalcheck.py`, `program_env.py`, `reaper.py`. A channel never imports another (lint-imports).
"""
