"""A key that stays echoed on its question's line, with nothing else changed, was read, not taken: it wants Enter
(issue 48). Two readings rest on it, each on a real program on a real pseudo-terminal:

- a curses program's `:` command line (raw mode, it echoes what is typed, it runs the command on Enter; vim's too) is read as a
  pager's `:` (generic.pager: its keys, no Enter), and the model's command was typed without its Enter, then typed again
  into the same line as a second answer. Now the command, echoed whole after the `:` and nothing else changed, gets one
  Enter. less under git log still gets its q without Enter (test_pagers.py), since less never echoes its keys;
- questionary's confirm with auto_enter=False shows `(y/N) Yes` after y and waits for Enter: answered once, with Enter;
  read as a field (an instruction of its own) and answered y without Enter, it got y three more times (the loop breaker).
  Its default confirm (auto_enter=True) takes one key and no Enter leaks into the next question; a bash `read -n1`
  (the terminal echoes its key, so an echo there is no sign it waits) takes one key.
Answered by a model (the real openai SDK against the local fake) and by rules."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, question_of, script, typed

pytestmark = pytest.mark.timeout(180)

COMMAND_LINE = """
    import curses

    def main(w):
        curses.raw(); curses.noecho()
        h, width = w.getmaxyx()
        w.addstr(0, 0, " files: ~/project ".ljust(width - 1), curses.A_REVERSE)
        for i, name in enumerate(["README.md", "notes.txt", "old.log", "src/"]):
            w.addstr(2 + i, 2, name)
        w.addstr(h - 2, 0, " Type a command at the ':' line (open FILE, rename A B), then Enter ".ljust(width - 1), curses.A_REVERSE)
        w.addstr(h - 1, 0, ":")
        w.refresh()
        line = ""
        while True:
            key = w.getch()
            if key in (10, 13):
                break
            line = line[:-1] if key in (127, 8, curses.KEY_BACKSPACE) else line + chr(key) if 32 <= key < 127 else line
            w.move(h - 1, 0); w.clrtoeol(); w.addstr(h - 1, 0, ":" + line); w.refresh()
        with open("out.txt", "a") as f:
            f.write(line + "\\n")

    curses.wrapper(main)
"""


def _model(pilot, command, reply):
    asked: list[str] = []

    def answer(prompt: str) -> str:
        asked.append(question_of(prompt))
        return reply(asked[-1])
    with FakeLLM(answer=answer) as server:
        r = pilot(command, "--provider", "openai", "--base-url", server.url + "/v1", env={"OPENAI_API_KEY": KEY})
    return r, asked


@pytest.mark.parametrize("answerer", ["model", "rules"])
def test_a_curses_command_line_after_a_colon_gets_its_command_and_one_enter(pilot, tmp_path, answerer):
    command = script(tmp_path, "files", COMMAND_LINE)
    if answerer == "rules":
        r = pilot(command, rules="- {id: cmd, match: '(?m)^:$', reply: 'open notes.txt'}\n")
    else:  # (a fake server keeps no answer schema: the model's command is what a model that read the screen says)
        r, asked = _model(pilot, command, lambda q: typed("open notes.txt"))
        assert len(asked) == 1, asked
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "open notes.txt\n"  # typed once, then Enter: not typed again, not lost
    assert [a["reply"] for a in r.of("answer")] == ["open notes.txt"]
    (enter,) = r.of("enter_after_echo")
    assert enter["echoed"] == "open notes.txt"


def test_a_model_held_to_the_pagers_keys_gets_asked_for_the_line_once_its_q_shows_after_the_colon(pilot, tmp_path):
    """A model that keeps the answer schema can only say q or space at a pager's ':'. The command line shows the q after
    its ':' and nothing else: no pager does that. The q is erased (sent with Enter it would have run `q`) and the
    question is asked again as a line, without the pager's keys; the command goes with its Enter."""
    def reply(q: str) -> str:
        return typed("open notes.txt") if "not a pager" in q else typed("q")
    with FakeLLM(answer=lambda prompt: reply(prompt)) as server:
        r = pilot(script(tmp_path, "files", COMMAND_LINE), "--provider", "openai", "--base-url", server.url + "/v1",
                  env={"OPENAI_API_KEY": KEY})
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "open notes.txt\n"
    schemas = [json.dumps(q["json"].get("response_format") or {}) for q in server.requests]
    assert len(schemas) == 2 and '"<space>"' in schemas[0] and '"<space>"' not in schemas[1]
    (line,) = r.of("read_as_line")
    assert (line["rule_id"], line["echoed"]) == ("generic.pager", "q")
    assert [(a["rule_id"], a["reply"]) for a in r.of("answer")] == [("generic.pager", "q"), ("generic.pager.line", "open notes.txt")]


@pytest.mark.skipif(shutil.which("vim") is None, reason="needs vim")
def test_vims_command_line_gets_the_command_a_model_held_to_a_pagers_keys_could_not_give(pilot, tmp_path):
    """vim in command-line mode (`:` typed by feedkeys, as a person would) shows what less shows: a ':' in raw mode on
    the last row. The model's q shows after it: asked again as a line, it saves and quits with `wq` and its Enter."""
    (tmp_path / "notes.txt").write_text("draft notes\n")
    vim = ["vim", "-u", "NONE", "-N", "-i", "NONE", "-n", "-c", "normal! Gofinal line", "-c", 'call feedkeys(":")', "notes.txt"]
    with FakeLLM(answer=lambda prompt: typed("wq") if "not a pager" in prompt else typed("q")) as server:
        r = pilot(vim, "--provider", "openai", "--base-url", server.url + "/v1", "--prompt", "Save the notes and leave the editor.",
                  env={"OPENAI_API_KEY": KEY})
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "notes.txt").read_text() == "draft notes\nfinal line\n"
    assert [a["reply"] for a in r.of("answer")] == ["q", "wq"] and len(r.of("read_as_line")) == 1


CONFIRM = """
    import questionary
    go = questionary.confirm("Publish the package now?", default=False, auto_enter={auto}).ask()
    name = questionary.text("Release name?", default="untitled").ask()
    open("out.txt", "w").write(f"{{go}} {{name}}\\n")
"""


@pytest.mark.parametrize("answerer", ["model", "rules"])
@pytest.mark.parametrize("auto", [False, True])
def test_a_questionary_confirm_is_answered_once_with_or_without_auto_enter(pilot, tmp_path, auto, answerer):
    command = script(tmp_path, "confirm", CONFIRM.format(auto=auto))
    if answerer == "rules":
        r = pilot(command, rules="- {match: 'Publish the package', reply: 'y'}\n- {match: 'Release name', reply: spring}\n")
    else:
        r, asked = _model(pilot, command, lambda q: typed("y") if "Publish" in q else typed("spring"))
        assert len(asked) == 2, asked
    assert r.code == 0, r.stdout + r.stderr
    # one y; with auto-enter no Enter leaks into the next question (its default would be taken: 'True untitledspring')
    assert (tmp_path / "out.txt").read_text() in ("True spring\n", "True untitledspring\n")
    assert [a["reply"] for a in r.of("answer")] == ["y", "spring"] and r.of("escalation") == []
    if auto:
        assert (tmp_path / "out.txt").read_text() == "True untitledspring\n" or r.of("enter_skipped")


def test_mirror_bash_read_n1_takes_one_key_and_its_echo_asks_for_no_enter(pilot, tmp_path):
    """The terminal echoes read -n1's key itself: no sign the program waits for more. The next read gets its own answer."""
    command = ["bash", "-c", "read -n1 -p 'Continue? [y/n] ' k; echo; read -p 'Tag name: ' t; echo \"$k,$t\" > out.txt"]
    r, asked = _model(pilot, command, lambda q: typed("y") if "Continue" in q else typed("v2"))
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "y,v2\n"
    assert r.of("enter_after_echo") == [] and len(asked) == 2, json.dumps(asked)


def test_trap_a_confirm_without_auto_enter_read_as_a_field_gets_enter_after_its_echo_not_a_second_y(pilot, tmp_path):
    """questionary's confirm without auto-enter, with an instruction of its own (no `(y/N)`: read as a field), answered by
    a model that says its y needs no Enter: `Yes` showed after the y, the line changed, and y was typed three more times
    (`... then Enter) Yes`) until the loop breaker ended the run (exit 3). The y stays echoed, nothing else changed: Enter."""
    command = script(tmp_path, "confirm", """
        import questionary
        go = questionary.confirm("Publish the package now?", default=False, auto_enter=False,
                                 instruction="(press y or n, then Enter) ").ask()
        open("out.txt", "w").write(f"{go}\\n")
    """)
    r, asked = _model(pilot, command, lambda q: typed("y", submit=False))
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "True\n"
    assert len(asked) == 1 and [a["reply"] for a in r.of("answer")] == ["y"]
    assert r.of("enter_after_echo")[0]["echoed"] == "Yes"
