"""What a tool call does, read from its input, PURE: its acts (the deny policy's ids: delete, overwrite, mkfs, sql_drop,
reset_hard, force_push) and the paths it removes or overwrites, as the call names them (hooks/paths.py resolves them).

- A file tool (Claude's Edit, Write, MultiEdit, NotebookEdit; Gemini's write_file and replace; Cursor's) overwrites
  its file; Cursor's Delete removes it.
- A command is read by the deny policy's command rules (decide/policy.py: `rm`, `git clean -f`, `find -delete`, a force
  push, `git reset --hard`, DROP/TRUNCATE, mkfs, dd), plus what a shell does to files without those words: `>`
  and `>>` redirects, `mv` (its sources leave their place, its target is overwritten), `cp` and `install` onto a file, `tee`,
  `truncate`, `sed -i`, `git checkout/restore` of paths (they discard the changes). Words inside a command (`grep
  delete`) are not acts: a command is read as a command, not as a question.
- An MCP tool (or anything else) says what it does in words, if at all: its input is read like a question's block
  (decide/weigh.py: "delete", "drop table", "overwrite" anywhere in it).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from cursorpilot.decide import weigh
from cursorpilot.decide.policy import RULES
from cursorpilot.hooks.calls import MCP, OTHER, REMOVE, SHELL, WRITE, Call

_COMMAND_ACTS = {"delete": "delete", "force_push": "force_push", "reset_hard": "reset_hard", "sql_drop": "sql_drop",
                 "mkfs": "mkfs", "dd": "overwrite"}
_PREFIXES = {"sudo", "command", "exec", "env", "nice", "nohup", "time", "xargs", "builtin", "doas"}
EMPTIES = "empties"  # a touch that removes what it picks inside a folder, not the folder
_SPLIT = {";", "&&", "||", "|", "&", "(", ")", "\n"}


@dataclass(frozen=True, slots=True)
class Does:
    """What a call does: its acts, the paths it deletes or overwrites (`touches`: (act, path as named)), the text that
    shows it (the command, the tool and its input) and the words that say so (`evidence`); `floor`: an `rm` of `~`, `/`
    or outside the working tree that an MCP tool's words show (decide/weigh.py), which nothing the user wrote lifts (a
    command's own paths are resolved and held to the floor in hooks/verdict.py)."""

    acts: frozenset[str]
    touches: tuple[tuple[str, str], ...]
    text: str
    evidence: str = ""
    floor: str | None = None


@dataclass(frozen=True, slots=True)
class Target:
    """One path a call removes or overwrites, resolved (hooks/paths.py): how (`act`: delete, overwrite, or `EMPTIES`:
    removes what it picks inside a folder, `find -delete`, `git clean`), every form the user's words could name it by,
    what lies inside it when it is a removed folder (and whether that was read whole), and where it is: outside the
    project (a file written in the system's temp folder is not), the project itself, or one of the files the hook
    stands on (`guard`: the agent's hook settings, the prompt or policy file it reads)."""

    act: str
    forms: tuple[str, ...]
    inside: tuple[str, ...] = ()
    truncated: bool = False
    outside: bool = False
    root: bool = False
    guard: str | None = None


def does(call: Call) -> Does:
    if call.kind == SHELL:
        return command(call.command)
    if call.kind in (WRITE, REMOVE):
        act = "overwrite" if call.kind == WRITE else "delete"
        return Does(frozenset({act}), tuple((act, p) for p in call.paths), f"{call.tool} {' '.join(call.paths)}",
                    f"{call.tool} {call.paths[0]}")
    if call.kind in (MCP, OTHER) and call.text:
        text = f"{call.tool}\n{call.text}"
        look = weigh.trigger(text, call.cwd or None, frozenset()) if call.kind == MCP else None
        if look is not None:
            return Does(look.acts, (), text, look.evidence, look.floor)
    return Does(frozenset(), (), call.tool)


def command(text: str) -> Does:
    """A shell command's acts and the paths it removes or overwrites."""
    acts = {act: rx.search(text) for rule, rx in RULES.items() if (act := _COMMAND_ACTS.get(rule)) is not None}
    found = {act: " ".join(m.group(0).split()) for act, m in acts.items() if m is not None}
    touches = list(_touches(text))
    for act, path in touches:
        found.setdefault("delete" if act == EMPTIES else act, f"{act} {path}")
    evidence = next(iter(found.values()), "")
    return Does(frozenset(found), tuple(dict.fromkeys(touches)), f"$ {text}", evidence)


def words(text: str) -> list[list[str]]:
    """The command's simple commands, each its words (quotes removed), operators apart (`>` and `>>` kept as words)."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = ""
    out: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token in _SPLIT or set(token) <= set(";&|()") and token:
                out.append([])
            else:
                out[-1].append(token)
    except ValueError:  # an open quote: the words read so far
        pass
    return [w for w in out if w]


def _touches(text: str) -> list[tuple[str, str]]:
    """The paths the command's simple commands remove or overwrite, each against the folder a `cd` before it left."""
    out: list[tuple[str, str]] = []
    folder = ""
    for ws in words(text):
        found: list[tuple[str, str]] = []
        ws = _redirects(ws, found)
        while ws and ("=" in ws[0] and not ws[0].startswith("-") or ws[0] in _PREFIXES):
            ws = ws[1:]
        if ws[:1] == ["cd"] and len(ws) > 1:
            folder = ("" if ws[1].startswith(("/", "~", "$")) else folder) + ws[1].rstrip("/") + "/"
            continue
        if ws:
            found += _program(ws[0].rsplit("/", 1)[-1], ws[1:])
        out += [(act, path if path.startswith(("/", "~", "$")) else f"{folder}{path}") for act, path in found]
    return out


def _redirects(ws: list[str], out: list[tuple[str, str]]) -> list[str]:
    """The words without their redirections; `> FILE` overwrites FILE, and `>> FILE` changes it as an edit does (an
    Edit is an overwrite of its file here too)."""
    kept: list[str] = []
    i = 0
    while i < len(ws):
        if ws[i] in (">", ">|", "&>", ">&", ">>", "&>>") and i + 1 < len(ws):
            target = ws[i + 1]
            if not target.startswith("&") and target not in ("/dev/null", "/dev/stdout", "/dev/stderr") and not target.isdigit():
                out.append(("overwrite", target))
            i += 2
            continue
        if ws[i] in ("<", "<<", "<<<") and i + 1 < len(ws):
            i += 2
            continue
        if kept and kept[-1].isdigit() and ws[i] == ">":  # 2>
            kept.pop()
        kept.append(ws[i])
        i += 1
    return kept


def _program(name: str, args: list[str]) -> list[tuple[str, str]]:
    plain = [a for a in args if not a.startswith("-") or a == "-"]
    if name in ("rm", "rmdir", "unlink", "shred", "srm"):
        return [("delete", a) for a in plain]
    if name == "mv" and len(plain) >= 2:
        return [*(("delete", a) for a in plain[:-1]), ("overwrite", plain[-1])]
    if name in ("cp", "install", "rsync") and len(plain) >= 2:
        return [("overwrite", plain[-1])]
    if name in ("tee", "truncate") and "-a" not in args and "--append" not in args:
        return [("overwrite", a) for a in plain if not (name == "truncate" and a[:1].isdigit())]
    if name in ("sed", "perl") and any(a.startswith("-i") or a == "--in-place" for a in args):
        scripts = {args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-e", "--expression", "-f")}
        scripted = bool(scripts) or any(a.startswith(("-e", "--expression=")) for a in args)
        return [("overwrite", a) for a in (plain if scripted else plain[1:]) if a not in scripts]
    if name == "dd":
        return [("overwrite", a[3:]) for a in args if a.startswith("of=")]
    if name == "find" and "-delete" in args:
        starts = args[:next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))]
        return [(EMPTIES, a) for a in starts] or [(EMPTIES, ".")]
    if name == "git":
        return _git(plain, args)
    return []


def _git(plain: list[str], args: list[str]) -> list[tuple[str, str]]:
    sub, rest = (plain[0], plain[1:]) if plain else ("", [])
    if sub == "rm":
        return [("delete", a) for a in rest]
    if sub == "clean" and any(a.startswith("-") and not a.startswith("--") and "f" in a or a == "--force" for a in args):
        return [(EMPTIES, a) for a in rest] or [(EMPTIES, ".")]
    if sub in ("checkout", "restore"):
        return [("overwrite", a) for a in rest if a != "--" and ("/" in a or "." in a)]
    return []
