"""`run`'s options, declared once: `RunArgs`, each field with its option's metadata (its default, range, help and panel,
whether a resumed run keeps it, whether a run that starts at once may be given it).

Everything else is derived from it: typer's `run` command (cli.py builds its parameters from `FIELDS`), the tables the
quick-start parser reads (startup/fastpath.py: startup/start.py reads a plain run's command line without typer, and starts its
program before the rest is imported), the options a resumed run keeps (`RESUMABLE`), the paths, and the demo's run (a
`RunArgs` with a few fields of its own). tests/unit/test_start.py holds typer's table, the parser and the demo to it.

Stdlib only, and light: a run's start imports it before anything else. So `RunArgs` is not built by `dataclasses`
(whose import, with `inspect`'s, costs a run's start 8-10 ms): `Options` is a frozen, keyword-only record of a few
lines, which type checkers read as a dataclass (`dataclass_transform`): `RunArgs(cols="x")` or a misspelt field is a
type error where it is written.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (not typing's: its import costs a run's start 2 ms; the type checker reads the name alike)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any, ClassVar, Self, dataclass_transform
else:
    def dataclass_transform(**_):  # (typing costs a run's start 2 ms: the decorator is for the type checker alone)
        return lambda cls: cls


class RunOption:
    """One option's metadata: its default, its range, its help and panel in `run --help`, its environment variable,
    the completion.py function that completes it, whether a resumed run keeps it unless it is given again, whether a
    run given it may start its program before the rest is read (startup/start.py), and its kind (flag, int, float, str, path,
    list or command), read from the field's annotation."""

    __slots__ = ("default", "help", "panel", "metavar", "min", "max", "envvar", "complete", "resumable", "quick", "kind", "channel",
                 "by_agent")

    def __init__(self, **given: Any) -> None:
        for name in self.__slots__:
            setattr(self, name, given.get(name))

    default: Any
    help: str
    panel: str | None
    metavar: str | None
    min: float | None
    max: float | None
    envvar: str | None
    complete: str | None
    resumable: bool
    quick: bool
    kind: str
    channel: str | None  # a channel's flag (channels/registry.py): the plan key of the channel it picks
    by_agent: bool  # that channel is the one `--agent` picks without the flag


def option(*, default: Any, help: str, panel: str | None = None, metavar: str | None = None, min: float | None = None,
           max: float | None = None, envvar: str | None = None, complete: str | None = None, resumable: bool = True,
           quick: bool = False) -> Any:
    """A field of RunArgs: its default and its option's metadata (RunOption)."""
    return RunOption(default=default, help=help, panel=panel, metavar=metavar, min=min, max=max, envvar=envvar, complete=complete,
                  resumable=resumable, quick=quick)


KINDS = {"bool": "flag", "int": "int", "float": "float", "str": "str", "Path": "path", "tuple[str, ...]": "list"}


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(option,))
class Options:
    """A frozen record of options: keyword-only, each field an `option(...)`; `replace` makes a changed copy."""

    FIELDS: ClassVar[dict[str, RunOption]] = {}

    def __init_subclass__(cls) -> None:
        cls.FIELDS = {}
        for name, annotation in cls.__annotations__.items():
            spec = cls.__dict__.get(name)
            if isinstance(spec, RunOption):
                spec.kind = "command" if name == "command" else KINDS[annotation.removesuffix(" | None")]
                cls.FIELDS[name] = spec

    def __init__(self, **values: Any) -> None:
        unknown = set(values) - set(self.FIELDS)
        if unknown:
            raise TypeError(f"{type(self).__name__}: no option {', '.join(sorted(unknown))}")
        for name, spec in self.FIELDS.items():
            object.__setattr__(self, name, values.get(name, spec.default))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: replace(**changes) makes a changed copy")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.values() == other.values()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        changed = ", ".join(f"{k}={v!r}" for k, v in self.values().items() if v != self.FIELDS[k].default)
        return f"{type(self).__name__}({changed})"

    def values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.FIELDS}

    def replace(self, **changes: Any) -> Self:
        return type(self)(**{**self.values(), **changes})


PROGRAM, ANSWERS, LIMITS, OUTPUT, PLANS, ACP = "Program", "Answers", "Limits", "Output", "Plans and runs", "ACP"
PEOPLE, TURNS = "When a person is needed", "Turn ends and the goal"
LOG_HELP = ("Where the run's records go (default: $XDG_STATE_HOME/cursor-pilot/runs/<run-id>/, or $CURSORPILOT_RUNS/<run-id>/); "
            "a folder that holds a run is refused.")
QUIET_HELP = "Show only the final summary: no live screen, no answers, no program output."
REPORT_HELP = "When the run ends (also a failed one), write report.html, report.json and report.md beside the transcript."
DEBUG_HELP = "Diagnostics on stderr as well, and a traceback on errors."


class RunArgs(Options):
    """`cursor-pilot run`'s options (by panel, in the order `run --help` shows them), the values its body takes."""

    command: tuple[str, ...] | None = option(default=None, metavar="-- COMMAND [ARGS]",
                                             help="The program to drive and its arguments (after -- or after the options).")
    cwd: Path | None = option(default=None, quick=True, panel=PROGRAM, help="The program's working directory.")
    cols: int = option(default=120, min=20, max=1000, quick=True, panel=PROGRAM,
                       help="The program's terminal width (the live view is cropped to yours).")
    rows: int = option(default=40, min=5, max=1000, quick=True, panel=PROGRAM, help="The program's terminal height.")
    profile: str = option(default="auto", complete="profiles", quick=True, panel=PROGRAM,
                          help="How its screens are read: a detector profile (cursor-pilot profiles), a profile file, or auto.")
    detectors: Path | None = option(default=None, panel=PROGRAM, help="A YAML/JSON file adding or overriding detector rules.")
    keep_ci_env: bool = option(default=False, quick=True, panel=PROGRAM,
                               help="Pass CI=true and the like on to the program (by default hidden: it has a user, the pilot).")
    no_native_deny: bool = option(default=False, quick=True, panel=PROGRAM,
                                  help="Leave the agent's own deny list and cursor-pilot's hook out of the agent's settings "
                                       "(docs/headless.md, docs/hooks.md): the policy still judges what the pilot is asked.")
    prompt: str | None = option(default=None, quick=True, panel=ANSWERS,
                                help="The governing prompt: a file, or its text (more than one word).")
    policy: Path | None = option(default=None, metavar="FILE", panel=ANSWERS,
                                 help="A pinned deny policy (cursor-pilot policy -o FILE, corrected by you): used instead of "
                                      "compiling the governing prompt (docs/guard-rails.md).")
    rules: Path | None = option(default=None, quick=True, panel=ANSWERS,
                                help="A rules file: a YAML list of {match, reply} (docs/rules.md); the script's replies.")
    learn: Path | None = option(default=None, metavar="FILE", resumable=False, panel=ANSWERS,
                                help="You answer every question at the terminal; your answers become the rules in FILE "
                                     "(docs/rules.md#learning-from-a-person).")
    answer: tuple[str, ...] | None = option(default=None, quick=True, panel=ANSWERS,
                                            help="A rule in one line, 'REGEX=REPLY' (repeatable; checked before --rules).")
    secret: tuple[str, ...] | None = option(default=None, metavar="NAME=ENVVAR", quick=True, panel=ANSWERS,
                                            help="A secret read from the environment, typed where a reply says <secret:NAME> "
                                                 "and never shown or written down (repeatable).")
    provider: str | None = option(default=None, complete="providers", quick=True, panel=ANSWERS,
                                  help="rules | script | openai | anthropic | local (a GGUF in-process; default: from the API key that is set).")
    model: str | None = option(default=None, quick=True, panel=ANSWERS,
                               help="The model (openai: gpt-4o-mini, anthropic: claude-haiku-4-5, local: PATH.gguf or "
                                    "hf:OWNER/REPO/FILE.gguf, either pinned with #sha256=HEX).")
    base_url: str | None = option(default=None, quick=True, panel=ANSWERS, help="The model's server, e.g. an OpenAI-compatible one.")
    escalate_to: tuple[str, ...] | None = option(default=None, metavar="PROVIDER:MODEL[@BASE_URL]", quick=True, panel=ANSWERS,
                                                 help="A stronger model, asked only when the one before it is unsure or answers "
                                                      "outside what the question takes (repeatable, in order; docs/llm.md).")
    escalate_margin: float = option(default=0.9, min=0.0, max=1.0, quick=True, panel=ANSWERS,
                                    help="With --escalate-to: the least token margin (log-probabilities) a model's answer "
                                         "needs to be kept (bench/README.md: how 0.9 was chosen).")
    llm_retries: int = option(default=4, min=0, quick=True, panel=ANSWERS,
                              help="Retries on 429, a 5xx that may pass, timeouts, connection errors.")
    llm_timeout: str = option(default="60s", quick=True, panel=ANSWERS, help="The timeout of each model call.")
    context_tokens: int = option(default=3000, min=200, quick=True, panel=ANSWERS, help="The token budget of each prompt to the model.")
    no_upload: bool = option(default=False, quick=True, panel=ANSWERS, help="Send the model only terminal text: no git snapshot.")
    prices: Path | None = option(default=None, panel=ANSWERS,
                                 help="YAML {model: \\[usd_per_1M_in, usd_per_1M_out, optional usd_per_1M_cached_in]} for the cost estimate.")
    max_steps: int | None = option(default=None, min=1, quick=True, panel=LIMITS, help="Answer at most N prompts (then exit 4).")
    max_model_calls: str = option(default="1000/20", metavar="N[/Q]", quick=True, panel=LIMITS,
                                  help="Call the model at most N times in the run and Q times for one question (then exit 4); "
                                       "'off': no cap.")
    timeout: str | None = option(default=None, quick=True, panel=LIMITS, help="Cap the whole run: 90s, 45m, 1h30m (then exit 4).")
    done_when: str | None = option(default=None, metavar="CMD", panel=TURNS,
                                   help="A shell command run at each turn end: exit 0 means the goal is met (docs/turns.md).")
    max_turns: int | None = option(default=None, min=1, panel=TURNS,
                                   help="Give an agent at most N turns per step (default 10; then exit 4).")
    max_wall: str | None = option(default=None, panel=TURNS, help="Start no new turn after this long: 30m, 2h (then exit 4; --timeout cuts).")
    max_cost: float | None = option(default=None, min=0.0, metavar="USD", panel=TURNS,
                                    help="Start no new turn once the model has cost this much (needs its price).")
    on_limit: str = option(default="wait", metavar="wait|stop|switch-model", panel=TURNS,
                           help="At an agent's usage limit: wait for its reset and continue the session (within --max-wall), "
                                "stop (exit 4), or switch to the model it offers (docs/turns.md).")
    stuck_after: str | None = option(default=None, metavar="DURATION", panel=TURNS,
                                     help="An agent at work with no progress sign this long is interrupted and told to continue "
                                          "(default: its profile's, 10m).")
    notify: tuple[str, ...] | None = option(default=None, metavar="URL", envvar="CURSOR_PILOT_NOTIFY", resumable=False, panel=PEOPLE,
                                            help="When a person is needed, send a notice with the decision page's link to this "
                                                 "Apprise URL: ntfy, Slack, Telegram, mailto, json://host:port/... (repeatable; "
                                                 "docs/human.md).")
    listen: str | None = option(default=None, metavar="HOST:PORT", resumable=False, panel=PEOPLE,
                                help="Serve the decision page here (default with --notify: 127.0.0.1, any port). "
                                     "Beyond loopback anyone who gets a question's link can answer it: it warns.")
    human_timeout: str | None = option(default=None, metavar="DURATION", panel=PEOPLE,
                                       help="Wait at most this long for a person's answer (then exit 3), e.g. 30m.")
    on_human_timeout: str = option(default="exit", metavar="exit|no", panel=PEOPLE,
                                   help="When --human-timeout passes: exit 3, or answer the question's own no "
                                        "(its reject option, n; exit 3 where it has none).")
    log: Path | None = option(default=None, quick=True, resumable=False, panel=OUTPUT, help=LOG_HELP)
    quiet: bool = option(default=False, quick=True, resumable=False, panel=OUTPUT, help=QUIET_HELP)
    report: bool = option(default=False, quick=True, resumable=False, panel=OUTPUT, help=REPORT_HELP)
    debug: bool = option(default=False, quick=True, resumable=False, panel=OUTPUT, help=DEBUG_HELP)
    plan: Path | None = option(default=None, complete="plans", panel=PLANS,
                               help="A YAML plan of steps, or a bundled one by name (cursor-pilot plans).")
    cursor: str = option(default="cursor-agent", panel=PLANS, help="The Cursor binary for a plan's cursor: steps.")
    dry_run: bool = option(default=False, resumable=False, panel=PLANS,
                           help="Preview: start each step's program, stop it at its first question, type nothing "
                                "(what it does before asking, it does).")
    resume: Path | None = option(default=None, resumable=False, panel=PLANS,
                                 help="Continue a run: its manifest.json, its folder or its id.")
    force: bool = option(default=False, resumable=False, panel=PLANS, help="Resume even if the plan or the governing prompt changed.")
    # (around --agent, each channel's flag as its registry entry declares it, added below: --acp, which --agent alone
    # implies, before it; --headless after it)
    agent: str | None = option(default=None, complete="agents", panel=ACP,
                               help="A known ACP agent: cursor, gemini, claude, codex (implies --acp; with --headless: claude, cursor).")
    task: str | None = option(default=None, panel=ACP, help="The task, sent as the first prompt.")

    @classmethod
    def from_values(cls, values: Mapping[str, object]) -> RunArgs:
        """The options as a reader gives them (typer, the quick-start parser, a manifest): a path a Path, a list a tuple."""
        from pathlib import Path

        def typed(name: str, value: object) -> object:
            kind = cls.FIELDS[name].kind
            if value is None:
                return None
            if kind == "path":
                return Path(value)  # type: ignore[arg-type]  # (some typer releases hand an Optional[Path] over as str)
            if kind in ("list", "command"):
                return tuple(value) or None  # type: ignore[arg-type]  # (click gives an option with an envvar as ())
            return value

        converted: dict[str, Any] = {k: typed(k, v) for k, v in values.items()}
        return cls(**converted)

    def saved(self) -> dict[str, object]:
        """The options a resumed run keeps, as the manifest holds them (plain JSON)."""
        out: dict[str, object] = {}
        for name in RESUMABLE:
            value = getattr(self, name)
            out[name] = str(value) if FIELDS[name].kind == "path" and value is not None else list(value) if isinstance(value, tuple) else value
        return out


def _with_channel_flags(fields: dict[str, RunOption]) -> dict[str, RunOption]:
    """RunArgs' fields with each channel's flag beside --agent, as its registry entry declares it (channels/registry.py:
    a channel added there is a `run` flag here, a key of a fleet's `channel:`, and nothing else to write)."""
    from cursorpilot.channels.registry import flagged

    def flags(by_agent: bool) -> dict[str, RunOption]:
        return {c.flag: RunOption(default=False, help=c.help, panel=ACP, resumable=True, quick=False, kind="flag", channel=c.key,
                               by_agent=c.by_agent) for c in flagged() if c.flag and c.by_agent == by_agent}

    out: dict[str, RunOption] = {}
    for name, spec in fields.items():
        out |= {**flags(True), name: spec, **flags(False)} if name == "agent" else {name: spec}
    assert len(out) == len(fields) + len(flagged()), "a channel's flag is already a run option"
    return out


RunArgs.FIELDS = _with_channel_flags(RunArgs.FIELDS)
FIELDS = RunArgs.FIELDS
RESUMABLE = tuple(name for name, spec in FIELDS.items() if spec.resumable)
PATHS = tuple(name for name, spec in FIELDS.items() if spec.kind == "path")
