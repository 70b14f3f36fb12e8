"""`cursor-pilot hook AGENT`: the governing prompt's compiled policy on every tool call an agent makes, inside the agent's
own hook (Claude Code's PreToolUse, Gemini CLI's BeforeTool, Cursor's beforeShellExecution / beforeMCPExecution /
preToolUse). An agent in an auto-accept mode asks nothing, and edits inside the project are never asked about: the
hook is where the user's words still bind. `calls.py` reads each agent's event and writes its answer (pure), `acts.py`
says what a call does (pure), `paths.py` resolves the paths it touches against the disk, `verdict.py` matches it
against the policy (pure), `install.py` writes the hook into a project's settings and takes it out again.
"""
