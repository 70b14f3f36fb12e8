"""The headless channel: an agent's print mode (`claude -p`, `cursor-agent -p`) driven through its NDJSON event stream."""
