"""The old name of decide/prompt_files.py, for the channels' loops that still import PromptFiler from here."""

from cursorpilot.decide.prompt_files import PromptFiler

__all__ = ["PromptFiler"]
