"""What an ACP agent said and did in its turn, read from its session updates, PURE: its messages (and the last one,
after its last tool call), the tool calls it announced and has not finished, what each says it does. The pilot keeps
one and asks it; the turn-end judge reads the messages, the stuck clock the running calls."""

from __future__ import annotations

from dataclasses import dataclass, field

from cursorpilot.records import models as R
from cursorpilot.channels.acp import ask
from cursorpilot.channels.acp.facts import Effect
from cursorpilot.decide.deliver import Record

_SPOKEN = ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk")


@dataclass(slots=True)
class Activity:
    said: list[str] = field(default_factory=list)  # the agent's messages this turn
    message: list[str] = field(default_factory=list)  # ...and its last one (after its last tool call)
    all_said: list[str] = field(default_factory=list)  # every message of the step
    running: set[str] = field(default_factory=set)  # tool calls announced and not finished
    actions: dict[str, str] = field(default_factory=dict)  # tool call id -> what it does, as the agent described it
    asked: set[str] = field(default_factory=set)  # tool call ids the agent asked permission for

    def begin(self) -> None:
        """A new turn: nothing said in it yet, nothing running."""
        self.said, self.message = [], []
        self.running.clear()

    def update(self, u: dict) -> tuple[list[Effect], str | None]:
        """A session update, recorded; and the tool call it says failed, if it does (the pilot asks who refused it)."""
        kind = u.get("sessionUpdate")
        if kind in _SPOKEN:
            text = str((u.get("content") or {}).get("text") or "")
            if kind == "agent_message_chunk":
                self.said.append(text)
                self.message.append(text)
                self.all_said.append(text)
            return [Record(R.AcpUpdate(update=kind, text=text))], None
        if kind in ("tool_call", "tool_call_update"):
            return self._tool_call(kind, u)
        if kind == "plan":
            return [Record(R.Plan(entries=u.get("entries")))], None
        return [Record(R.AcpUpdate(update=kind, data=u))], None

    def _tool_call(self, kind: str, u: dict) -> tuple[list[Effect], str | None]:
        if kind == "tool_call":
            self.new_message()
        tool_id, status = str(u.get("toolCallId") or ""), u.get("status")
        if status in ("pending", "in_progress") or (kind == "tool_call" and status is None):
            self.running.add(tool_id)
        elif status in ("completed", "failed"):
            self.running.discard(tool_id)
        if ask.describe(u).says_what:
            self.actions[tool_id] = ask.describe(u).text
        out: list[Effect] = [Record(R.ToolCall(update=kind, tool_call_id=u.get("toolCallId"), title=u.get("title"),
                                               kind=u.get("kind"), status=u.get("status"), raw_input=u.get("rawInput")))]
        return out, tool_id if status == "failed" else None

    def stuck_words(self, quiet: float) -> tuple[str, str]:
        """A turn with no sign of life, in words: what the agent said in it (its last message, else all of it), and why it
        is taken for stuck (the tool calls still running, if any)."""
        said = "".join(self.message).strip() or "".join(self.said).strip()
        running = sorted(self.running)
        tools = f" (its tool call{'s' if len(running) > 1 else ''} {', '.join(running)} still running)" if running else ""
        return said, f"stuck: nothing happened for {quiet:.0f}s in the middle of the agent's turn{tools}"

    def new_message(self) -> None:
        """A tool call (or a request for one) ends what the agent was saying: what it says after is a message of its own."""
        if self.said and not self.said[-1].endswith("\n\n"):
            self.said.append("\n\n")
        self.message = []


def texts_of(content: object) -> list[str]:
    """The text blocks of a tool call's content (ACP: a list of {type: content, content: {type: text, text}}), such as
    the words a failed call came back with."""
    blocks = content if isinstance(content, list) else []
    inner = [b.get("content") if isinstance(b, dict) and isinstance(b.get("content"), dict) else b for b in blocks]
    return [str(b["text"]) for b in inner if isinstance(b, dict) and isinstance(b.get("text"), str)]
