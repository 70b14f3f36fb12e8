"""Simulators: real programs that behave like the targets, for the demo and the tests.

``python -m cursorpilot.sim cursor SCENARIO`` acts like cursor-agent (Ink inline
redraws, trust dialog, approvals, prose questions, idle composer, failures);
``python -m cursorpilot.sim line SCENARIO`` is a line-mode program ([y/n], menus,
free text). Scenarios are YAML files; a bare name means one shipped in scenarios/.
Both append what they received to ``--record FILE`` as JSON lines.
"""
