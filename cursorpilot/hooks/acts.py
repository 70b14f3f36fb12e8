"""What a tool call does, read from its input, PURE: its acts (the deny policy's ids: delete, overwrite, mkfs, sql_drop,
reset_hard, force_push) and the paths it removes or overwrites, as the call names them (hooks/paths.py resolves them).

- A file tool (Claude's Edit, Write, MultiEdit, NotebookEdit; Gemini's write_file and replace; Cursor's) overwrites
  its file; Cursor's Delete removes it.
- A command is read by the deny policy's command rules (decide/policy.py: `rm`, `git clean -f`, `find -delete`, a force
  push, `git reset --hard`, DROP/TRUNCATE, mkfs, dd), plus what a shell does to files without those words: `>`
  redirects, `mv` (its sources leave their place, its target is overwritten), `cp` and `install` onto a file, `tee`,
  `truncate`, `sed -i`, `git checkout/restore` of paths (they discard the changes). Words inside a command (`grep
  delete`) are not acts: a command is read as a command, not as a question.
- An MCP tool (or anything else) says what it does in words, if at all: its input is read like a question's block
  (decide/weigh.py: "delete", "drop table", "overwrite" anywhere in it).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from cursorpilot.decide import weigh
from cursorpilot.decide.policy import RULES, check
from cursorpilot.hooks.calls import MCP, OTHER, REMOVE, SHELL, WRITE, Call

_COMMAND_ACTS = {"delete": "delete", "force_push": "force_push", "reset_hard": "reset_hard", "sql_drop": "sql_drop",
                 "mkfs": "mkfs", "dd": "overwrite"}
_PREFIXES = {"sudo", "command", "exec", "env", "nice", "nohup", "time", "xargs", "builtin", "doas"}
_SPLIT = {";", "&&", "||", "|", "&", "(", ")", "\n"}


@dataclass(frozen=True, slots=True)
class Does:
    """What a call does: its acts, the paths it deletes or overwrites (`touches`: (act, path as named)), the text that
    shows it (the command, the tool and its input) and the words that say so (`evidence`); `floor`: an `rm` of `~`, `/`
    or outside the working tree (decide/policy.py), which nothing the user wrote lifts."""

    acts: frozenset[str]
    touches: tuple[tuple[str, str], ...]
    text: str
    evidence: str = ""
    floor: str | None = None


@dataclass(frozen=True, slots=True)
class Where:
    """The touched paths' forms (`shown`), what lies inside a removed folder (`inside`, and whether it was read whole),
    and the touched paths that are outside the project (`outside`)."""

    shown: tuple[str, ...] = ()
    inside: tuple[str, ...] = ()
    outside: tuple[str, ...] = ()
    truncated: bool = False


def does(call: Call) -> Does:
    if call.kind == SHELL:
        return command(call.command, call.cwd)
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


def command(text: str, cwd: str) -> Does:
    """A shell command's acts and the paths it removes or overwrites."""
    acts = {act: rx.search(text) for rule, rx in RULES.items() if (act := _COMMAND_ACTS.get(rule)) is not None}
    found = {act: " ".join(m.group(0).split()) for act, m in acts.items() if m is not None}
    outside = check(text, cwd or None, frozenset(RULES))  # only rm_outside: every other rule is read above
    touches = list(_touches(text))
    for act, path in touches:
        found.setdefault(act, f"{act} {path}")
    if outside is not None:
        found.setdefault("delete", outside.evidence)
    evidence = next(iter(found.values()), "")
    return Does(frozenset(found), tuple(dict.fromkeys(touches)), f"$ {text}", evidence, outside.evidence if outside else None)


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
    out: list[tuple[str, str]] = []
    for ws in words(text):
        ws = _redirects(ws, out)
        while ws and ("=" in ws[0] and not ws[0].startswith("-") or ws[0] in _PREFIXES):
            ws = ws[1:]
        if ws:
            out += _program(ws[0].rsplit("/", 1)[-1], ws[1:])
    return out


def _redirects(ws: list[str], out: list[tuple[str, str]]) -> list[str]:
    """The words without their redirections; `> FILE` overwrites FILE (`>>` appends: nothing lost)."""
    kept: list[str] = []
    i = 0
    while i < len(ws):
        if ws[i] in (">", ">|", "&>", ">&") and i + 1 < len(ws):
            target = ws[i + 1]
            if not target.startswith("&") and target not in ("/dev/null", "/dev/stdout", "/dev/stderr") and not target.isdigit():
                out.append(("overwrite", target))
            i += 2
            continue
        if ws[i] in (">>", "<", "<<", "<<<") and i + 1 < len(ws):
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
        scripted = any(a in ("-e", "--expression") or a.startswith("-e") for a in args)
        return [("overwrite", a) for a in (plain if scripted else plain[1:])]
    if name == "dd":
        return [("overwrite", a[3:]) for a in args if a.startswith("of=")]
    if name == "find" and "-delete" in args:
        return [("delete", a) for a in args[:next((i for i, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))]] or [("delete", ".")]
    if name == "git":
        return _git(plain, args)
    return []


def _git(plain: list[str], args: list[str]) -> list[tuple[str, str]]:
    sub, rest = (plain[0], plain[1:]) if plain else ("", [])
    if sub == "rm":
        return [("delete", a) for a in rest]
    if sub == "clean" and any(a.startswith("-") and not a.startswith("--") and "f" in a or a == "--force" for a in args):
        return [("delete", a) for a in rest] or [("delete", ".")]
    if sub in ("checkout", "restore"):
        return [("overwrite", a) for a in rest if a != "--" and ("/" in a or "." in a)]
    return []
