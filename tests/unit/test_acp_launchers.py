"""Known ACP agents and what their adapters misread in the environment."""

import os

import pytest

from cursorpilot.channels.acp.launchers import misread

ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.mark.skipif(not ROOT, reason="the adapter only misreads IS_SANDBOX when it runs as root")
def test_is_sandbox_is_left_out_of_claude_agent_acp_as_root_unless_it_is_the_one_value_claude_code_takes():
    """claude-agent-acp 0.23 takes any IS_SANDBOX as leave to pass --allow-dangerously-skip-permissions; Claude Code
    accepts that flag from root only with IS_SANDBOX=1 and exits otherwise (session/new: "Query closed before response
    received")."""
    adapter = ["/x/node_modules/.bin/claude-agent-acp"]
    assert misread(adapter, {"IS_SANDBOX": "yes"}) == ["IS_SANDBOX"]
    assert misread(["npx", "-y", "@zed-industries/claude-agent-acp"], {"IS_SANDBOX": "true"}) == ["IS_SANDBOX"]
    assert misread(adapter, {"IS_SANDBOX": "1"}) == [] and misread(adapter, {}) == []
    # the mirror: every other agent keeps it
    assert misread(["codex-acp"], {"IS_SANDBOX": "yes"}) == [] and misread(["gemini", "--acp"], {"IS_SANDBOX": "yes"}) == []
