"""Pseudo-terminal: the driver (the only pexpect user) and the rendered screen."""
