"""The classifier over rendered screens, with timings from a fake clock (no sleeps)."""

import ast
import io
from pathlib import Path

import pytest
import yaml

from cursorpilot.clock import FakeClock
from cursorpilot.detect.classifier import Timing, classify, headline
from cursorpilot.detect.profiles import load_profile
from cursorpilot.detect.snapshot import snapshot_from_text
from cursorpilot.channels.pty.screen import TerminalScreen
from cursorpilot.sim.common import Recorder
from cursorpilot.sim.cursor import CursorSim
from tests.helpers import capture as capture_snapshot

CAPTURES = Path(__file__).resolve().parents[1] / "data" / "captures"
GENERIC = load_profile("generic")
CURSOR = load_profile("cursor")


class Feeder:
    """A screen fed bytes at fake times; classify() asks with the quiet time so far."""

    def __init__(self, profile, cols=120, rows=40):
        self.profile = profile
        self.clock = FakeClock()
        self.screen = TerminalScreen(cols, rows)
        self.changed = self.clock.monotonic()

    def feed(self, data: str | bytes) -> "Feeder":
        self.screen.feed(data.encode() if isinstance(data, str) else data)
        self.changed = self.clock.monotonic()
        return self

    def after(self, seconds: float):
        self.clock.advance(seconds)
        return classify(self.profile, self.screen.snapshot(), Timing(self.clock.monotonic() - self.changed))


class TtyOut(io.StringIO):
    """What a terminal receives from the simulator: the tty's ONLCR turns \\n into \\r\\n."""

    def getvalue(self) -> str:
        return super().getvalue().replace("\n", "\r\n")


def cursor_frames() -> tuple[CursorSim, io.StringIO]:
    sim = CursorSim({"steps": []}, "task", Recorder(None), 120)
    out = TtyOut()
    sim.ink.out = out
    return sim, out


# -- line-mode (generic) ---------------------------------------------------------


def test_yes_no_on_cursor_line_waits_for_the_settle_window():
    f = Feeder(GENERIC).feed("Preparing...\r\nContinue? [Y/n] ")
    assert f.after(0.1).state == "settling"
    c = f.after(0.35)
    assert (c.state, c.rule_id) == ("question", "generic.yes_no")
    assert "Continue? [Y/n]" in c.block


def test_prompt_followed_by_output_is_not_a_question():
    f = Feeder(GENERIC).feed("Continue? [y/n] \r\n" + "".join(f"line {i}\r\n" for i in range(10)))
    assert f.after(5).state == "unknown"


def test_old_prompt_in_scrollback_is_not_a_question():
    f = Feeder(GENERIC).feed("Continue? [y/n] y\r\nworking on it\r\n")
    assert f.after(5).state == "unknown"


def test_partial_line_is_input_only_after_silence():
    f = Feeder(GENERIC).feed("Project name: ")
    c = f.after(0.5)
    assert c.state == "unknown" and c.recheck_after == pytest.approx(1.0)
    c = f.after(1.0)
    assert (c.state, c.rule_id) == ("input", "generic.waiting_input")


def test_numbered_menu_prompt_block_holds_the_options():
    f = Feeder(GENERIC).feed("Pick a fruit:\r\n1) apple\r\n2) banana\r\n3) cherry\r\nChoose a fruit (1-3): ")
    c = f.after(0.5)
    assert (c.state, c.rule_id) == ("menu", "generic.choose")
    assert "1) apple" in c.block and "3) cherry" in c.block


@pytest.mark.parametrize("prompt", [
    "Proceed anyway? (y,N) ", "Delete? [y/N] ", "Sure? (yes/no) ", "Continue y/n? ", "Go on? [Y/n]: ", "Really? (Y/N)? ",
    "Ok? [yes/no] ", "Continue connecting (yes/no/[fingerprint])? ", "Stage this hunk [y,n,q,a,d,e,?]? ", "Is this OK? (yes) ",
    "Overwrite (y or n)? ", "Apply? [y|n] ", "Add file? (Y)es/(N)o [Yes]: ", "Continue? [N/y] ", "Say y/n: ",
    "replace a.txt? [y]es, [n]o, [A]ll, [N]one, [r]ename: ",
])
def test_mkfs_y_comma_N_and_every_yes_no_spelling_is_a_yes_no_question(prompt):
    """mkfs's `Proceed anyway? (y,N)` was read as free text: not a yes/no question, so the deny policy never weighed it."""
    c = Feeder(GENERIC).feed("mke2fs 1.47.0\r\n" + prompt).after(0.5)
    assert (c.state, c.rule_id) == ("question", "generic.yes_no")


@pytest.mark.parametrize("prompt", ["Pick (a/b)? ", "Format? (json/yaml) ", "Your name (yes): ", "Why? (not y/n, explain) "])
def test_look_alikes_of_yes_no_are_not(prompt):
    assert Feeder(GENERIC).feed(prompt).after(2).rule_id != "generic.yes_no"


def test_bash_select_is_a_menu_answered_by_number():
    """A bash `select` list was free text: a reply naming an option was typed literally, and the script rejected it."""
    c = Feeder(GENERIC).feed("1) apple\r\n2) banana\r\n3) cherry\r\n#? ").after(0.5)
    assert (c.state, c.rule_id) == ("menu", "generic.numbered")
    assert c.menu.typed and [o.label for o in c.menu.options] == ["apple", "banana", "cherry"]
    columns = "".join(f"{i}) item{i}".ljust(12) + (f"{i + 3}) item{i + 3}" if i + 3 <= 5 else "") + "\r\n" for i in (1, 2, 3))
    c = Feeder(GENERIC).feed(columns + "Pick a number: ").after(0.5)  # a long list is laid out in columns; PS3 set
    assert c.rule_id == "generic.numbered" and [o.number for o in c.menu.options] == [1, 2, 3, 4, 5]
    c = Feeder(GENERIC).feed("  Select license\r\n    1 - MIT\r\n    2 - BSD\r\n    Choose from [1/2] (1): ").after(0.5)
    assert c.rule_id == "generic.choose" and c.menu.typed and c.menu.options[1].label == "BSD"


@pytest.mark.parametrize("screen", [
    "Found:\r\n1) a.txt\r\n2) b.txt\r\nEnter a new name: ",  # a list of results, then a question of its own
    "3) x\r\n4) y\r\n#? ",  # numbers that do not start at 1
    "1) apple\r\n2) banana\r\n\r\n#? ",  # a blank row between
])
def test_a_numbered_list_that_is_not_a_menu(screen):
    assert Feeder(GENERIC).feed(screen).after(2).rule_id != "generic.numbered"


def test_a_numbered_list_above_any_prompt_offers_its_numbers_and_takes_text_too():
    """bash `select` with its own PS3="fruit? " was not seen as a menu: the label was typed instead of its number. A
    list of results above a question of its own ("Enter a new name:") is the same shape: its numbers are offered, and a
    reply naming none is typed as it is."""
    c = Feeder(GENERIC).feed("1) apple\r\n2) banana\r\n3) cherry\r\nfruit? ").after(0.5)
    assert (c.state, c.rule_id) == ("menu", "generic.numbered_prompt") and c.menu.typed
    assert [o.label for o in c.menu.options] == ["apple", "banana", "cherry"]
    c = Feeder(GENERIC).feed("Found:\r\n1) a.txt\r\n2) b.txt\r\nEnter a new name: ").after(2)
    assert c.rule_id == "generic.numbered_prompt" and GENERIC_RULES["generic.numbered_prompt"].free_text


GENERIC_RULES = {r.id: r for r in GENERIC.rules}


def test_half_drawn_menu_is_not_answered():
    f = Feeder(GENERIC).feed("Pick a fruit:\r\n1) apple\r\n")
    assert f.after(0.3).state == "settling"
    assert f.after(5).state == "unknown"


def test_ansi_coloured_prompt_is_read_from_the_rendered_screen():
    f = Feeder(GENERIC).feed("\x1b[1;33mDeploy now?\x1b[0m \x1b[2m(yes/no)\x1b[0m ")
    assert f.after(0.5).rule_id == "generic.yes_no"


def test_same_prompt_repainted_keeps_its_identity():
    f = Feeder(GENERIC).feed("Overwrite? [y/N] ")
    first = f.after(0.5)
    for _ in range(6):
        f.feed("\r\x1b[2KOverwrite? [y/N] ")
    assert f.after(0.5).key == first.key


def test_the_same_question_asked_again_on_a_new_line_is_a_new_prompt():
    f = Feeder(GENERIC).feed("Again? [y/n] ")
    first = f.after(0.5)
    f.feed("y\r\nAgain? [y/n] ")
    assert f.after(0.5).key != first.key


# -- cursor ----------------------------------------------------------------------------


def test_cursor_trust_dialog():
    sim, out = cursor_frames()
    f = Feeder(CURSOR)
    sim.ink.render(["", " ╭──╮", " │ ⚠ Workspace Trust Required │", " │ ▶ [a] Trust this workspace │", " │   [q] Quit │", " ╰──╯"])
    c = f.feed(out.getvalue()).after(0.5)
    assert (c.state, c.rule_id, c.submit) == ("menu", "cursor.trust", False)
    assert headline(c.block) == "⚠ Workspace Trust Required"


def approval_screen(working: bool = False) -> str:
    sim, out = cursor_frames()
    title, box, options = sim._approval_shape("run", "rm -rf build")
    rows = [" ┌──┐", f" │ {box[0]} │", " └──┘", f" {title}", " Not in allowlist: rm -rf build"]
    rows += [(" → " if i == 0 else "   ") + label for i, (label, _) in enumerate(options)]
    if working:
        rows += sim.composer(busy=True)
    sim.ink.render(rows + sim.footer())
    return out.getvalue()


def test_cursor_run_approval_is_a_single_key_question():
    c = Feeder(CURSOR).feed(approval_screen()).after(0.5)
    assert (c.state, c.rule_id, c.submit) == ("question", "cursor.approval", False)
    assert "$ rm -rf build" in c.block
    assert headline(c.block) == "Run this command?"


def test_working_marker_suppresses_every_question():
    c = Feeder(CURSOR).feed(approval_screen(working=True)).after(5)
    assert (c.state, c.rule_id) == ("working", "cursor.working")


def test_working_is_reported_before_the_screen_settles():
    sim, out = cursor_frames()
    sim.ink.render(["  ⬢ Generating.. 1.2k tokens", *sim.composer(busy=True), *sim.footer()])
    assert Feeder(CURSOR).feed(out.getvalue()).after(0.01).state == "working"


def test_idle_composer_after_prose_question_is_a_question():
    sim, out = cursor_frames()
    sim.turns = 1
    sim.ink.static(["", "  Which database should I use,", "  Postgres or SQLite?"], sim.idle_frame())
    c = Feeder(CURSOR).feed(out.getvalue()).after(2)
    assert (c.state, c.rule_id) == ("question", "cursor.idle.prose_question")
    assert c.block.endswith("Postgres or SQLite?")


def test_prose_with_y_in_parentheses_is_not_an_approval():
    sim, out = cursor_frames()
    sim.turns = 1
    sim.ink.static(["", "  Approvals are answered with (y)", "  or skipped with (esc or n)."], sim.idle_frame())
    c = Feeder(CURSOR).feed(out.getvalue()).after(2)
    assert (c.state, c.rule_id) == ("idle", "cursor.idle")


def test_idle_needs_a_longer_quiet_window():
    sim, out = cursor_frames()
    sim.ink.render(sim.idle_frame())
    f = Feeder(CURSOR).feed(out.getvalue())
    assert f.after(0.5).state == "unknown"
    assert f.after(1.1).state == "idle"


@pytest.mark.parametrize(
    "lines,error",
    [
        (["  Error: You've hit your usage limit", "    Get Cursor Pro for more Agent usage"], "usage_limit"),
        (["  Press any key to sign in..."], "login_required"),
        (["Cannot use this model: gpt-9. Available models: auto, composer-1"], "unknown_model"),
    ],
)
def test_cursor_failures(lines, error):
    sim, out = cursor_frames()
    sim.ink.static(lines, sim.idle_frame())
    c = Feeder(CURSOR).feed(out.getvalue()).after(2)
    assert (c.state, c.error) == ("error", error)


def test_ink_redraws_leave_no_ghosts():
    sim, out = cursor_frames()
    for i in range(50):
        sim.ink.render([f"  ⬢ Step {i}", *sim.composer(busy=True), *sim.footer()])
    sim.ink.render(sim.idle_frame())
    text = Feeder(CURSOR).feed(out.getvalue()).screen.snapshot().text()
    assert "Step" not in text and "ctrl+c to stop" not in text


def test_terminal_answers_cursor_position_queries():
    screen = TerminalScreen(80, 24)
    screen.feed(b"abc\r\nde\x1b[6n")
    assert screen.take_replies() == b"\x1b[2;3R"
    assert screen.take_replies() == b""


def test_utf8_split_across_reads_is_joined():
    screen = TerminalScreen(80, 24)
    data = "→ Add a follow-up".encode()
    screen.feed(data[:1])
    screen.feed(data[1:])
    assert screen.snapshot().lines[0] == "→ Add a follow-up"


# -- goldens from shared/captures -------------------------------------------------------

EXPECTED = yaml.safe_load((CAPTURES / "expected.yaml").read_text())
SCREENS = sorted(p for p in CAPTURES.glob("*.txt") if not p.name.endswith((".escapes.txt", "-raw-redraw.txt")))


PROFILES = {name: load_profile(name) for name in EXPECTED["default"]}


@pytest.mark.parametrize("capture", SCREENS, ids=lambda p: p.name)
@pytest.mark.parametrize("name", list(PROFILES))
def test_golden_captures(capture, name):
    expected = {**EXPECTED["default"], **EXPECTED["overrides"].get(capture.name, {})}[name]
    c = classify(PROFILES[name], capture_snapshot(capture), Timing(quiet_for=30))
    assert " ".join(filter(None, [c.state, c.rule_id if c.state != "unknown" else None])) == expected


def test_every_capture_is_recognised_by_its_own_profile():
    for capture in SCREENS:
        own = capture.name.split("-")[0]
        c = classify(PROFILES[own], capture_snapshot(capture), Timing(quiet_for=30))
        assert c.state != "unknown", capture.name


@pytest.mark.parametrize("capture, label", [("claude-3.txt", "No (recommended)"), ("codex-5.txt", "Trust and continue"),
                                            ("gemini-2.txt", "Trust parent folder (work)")])
def test_a_menu_capture_carries_its_options(capture, label):
    c = classify(PROFILES[capture.split("-")[0]], capture_snapshot(CAPTURES / capture), Timing(quiet_for=30))
    assert c.state == "menu" and c.menu is not None and c.menu.current.label == label


def test_auto_picks_the_agent_profiles_by_program_name():
    from cursorpilot.detect.profiles import resolve_name

    assert [resolve_name("auto", [cmd, "--flag"]) for cmd in ["claude", "/usr/bin/codex", "gemini", "aider", "vim"]] == [
        "claude", "codex", "gemini", "aider", "generic"]
    assert resolve_name("auto", ["npm", "init"]) == "prompts"


@pytest.mark.parametrize("tool", ["claude", "codex", "gemini"])
def test_raw_redraw_bytes_render_to_a_busy_screen_without_questions(tool):
    lines = (CAPTURES / f"{tool}-raw-redraw.txt").read_text().splitlines()
    raw = ast.literal_eval(next(line for line in lines if line.startswith("'")))
    screen = TerminalScreen(120, 40)
    screen.feed(raw.encode("utf-8", "surrogateescape"))
    snap = screen.snapshot()
    assert any(line.strip() for line in snap.lines)
    for profile in PROFILES.values():
        assert classify(profile, snap, Timing(30)).state in ("unknown", "working"), profile.name


PROSE = {
    "claude": ["❯ add a health endpoint", "● I added GET /health. Should it also report the database status?", "",
               "✻ Worked for 12s", "─" * 60, "❯ ", "─" * 60, "  ? for shortcuts · ← for agents"],
    "codex": ["› add a health endpoint", "", "• I added GET /health. Should it also report the database status?", "",
              "› Ask Codex to do anything", "  gpt default · ~/proj", "  ← for agents · ? for shortcuts"],
    "gemini": [" > add a health endpoint", " ✦ I added GET /health. Should it also report the database status?",
               " " * 60 + "? for shortcuts", "─" * 60, " Shift+Tab to accept edits", " >   Type your message or @path/to/file"],
}


@pytest.mark.parametrize("name", list(PROSE))
def test_an_agent_back_at_its_composer_with_a_question_in_prose_is_waiting_for_an_answer(name):
    snap = snapshot_from_text("\n".join(PROSE[name]))
    c = classify(PROFILES[name], snap, Timing(quiet_for=30))
    assert (c.state, c.rule_id) == ("question", f"{name}.idle.prose_question")
    assert c.block.endswith("Should it also report the database status?")
    done = [line.replace("Should it also report the database status?", "Done.") for line in PROSE[name]]
    assert classify(PROFILES[name], snapshot_from_text("\n".join(done)), Timing(quiet_for=30)).state == "idle"


def test_a_silence_rule_skipped_for_a_busy_program_is_looked_at_again():
    """A curses program waking every 50 ms to redraw is sampled busy now and then: with no recheck, its prompt was
    never looked at again (a silent hang until --timeout)."""
    from cursorpilot.detect.classifier import BUSY_RECHECK

    snap = snapshot_from_text("Filter the fruit list: ", at_line_end=True)
    busy = classify(PROFILES["generic"], snap, Timing(quiet_for=5.0, tty="busy"))
    assert busy.state == "unknown" and busy.recheck_after == BUSY_RECHECK
    assert classify(PROFILES["generic"], snap, Timing(quiet_for=5.0, tty="polling")).state == "input"


def screen_of(data: str, cols: int = 80, rows: int = 24):
    s = TerminalScreen(cols, rows)
    s.feed(data.encode())
    return s.snapshot()


def test_an_editor_with_the_cursor_on_an_empty_row_is_judged_as_the_whole_screen():
    """vi opened by git, cursor on the empty first row: the judged region came out empty, "nothing to judge", 0 calls."""
    from cursorpilot.detect.classifier import undecided

    snap = screen_of("\x1b[?1049h\x1b[2J\x1b[2;1H~\r\n~\r\n~\r\n\x1b[24;1H\"COMMIT_EDITMSG\" 0L, 0B\x1b[1;1H")
    judged = undecided(GENERIC, snap)
    assert "COMMIT_EDITMSG" in judged.block and judged.key


def test_a_blank_screen_is_still_a_question_for_a_judge():
    """bc -q shows nothing: the judge gets the blank screen (rules may match it), never "nothing to judge"."""
    from cursorpilot.detect.classifier import undecided

    judged = undecided(GENERIC, screen_of("\x1b[2J\x1b[H"))
    assert judged.block == "" and judged.key


def test_the_question_above_a_wordless_input_row_is_part_of_the_question():
    """The model got `(Y/n)` without the question row above it; a field in a box without the box's question."""
    c = classify(GENERIC, screen_of("Building...\r\ndone.\r\nDo you want to overwrite the config?\r\n(Y/n) "),
                 Timing(quiet_for=5.0, tty="reading"))
    assert c.block == "Do you want to overwrite the config?\n(Y/n)" and c.state in ("question", "input")
    c = classify(GENERIC, screen_of("   +---------------+\r\n   | Your name:    |\r\n   | "), Timing(quiet_for=5.0, tty="reading"))
    assert "Your name:" in c.block and "+----" not in c.block


def test_a_question_wrapped_over_several_rows_is_asked_whole():
    question = "Please type the name of the database you would like to create for this project, then press Enter: "
    c = classify(GENERIC, screen_of("setup\r\n" + question, cols=40), Timing(quiet_for=5.0, tty="reading"))
    assert " ".join(c.block.split()) == " ".join(question.split()) and "setup" not in c.block


def test_a_prefilled_default_is_presented_as_the_default_not_as_the_question():
    """prompt_toolkit's prompt('? Project name: ', default='my-app') leaves the default left of the cursor."""
    c = classify(GENERIC, screen_of("? Project name: my-app"), Timing(quiet_for=5.0, tty="polling"))
    assert c.prefill == "my-app" and c.state == "input"
    c = classify(GENERIC, screen_of("What should it be called?\r\n> untitled"), Timing(quiet_for=5.0, tty="polling"))
    assert c.prefill == "untitled" and c.block.startswith("What should it be called?")
    for shown in ("package name: (work) ", "Continue? [Y/n] ", "Name: "):
        assert classify(GENERIC, screen_of(shown), Timing(quiet_for=5.0, tty="reading")).prefill == ""


def test_polling_the_terminal_shortens_the_settle_of_prompts_not_of_finishes():
    snap = screen_of("sqlite> ")
    assert classify(GENERIC, snap, Timing(quiet_for=0.2, tty="polling")).state == "input"
    assert classify(GENERIC, snap, Timing(quiet_for=0.2, tty=None)).state == "settling"
    claude = load_profile("claude")
    idle = snapshot_from_text((CAPTURES / "claude-4.txt").read_text())
    assert classify(claude, idle, Timing(quiet_for=0.2, tty="polling")).state in ("settling", "unknown")


def test_an_earlier_prompt_with_its_answer_is_not_the_question_of_a_wordless_prompt_below_it():
    """'a: 1' above 'b: ' was taken for b's question: the new prompt looked like the old one and Enter was re-sent."""
    c = classify(GENERIC, screen_of("a: 1\r\nb: "), Timing(quiet_for=5.0, tty="reading"))
    assert c.block == "b:"
    c = classify(GENERIC, screen_of(">>> x = 1\r\n>>> "), Timing(quiet_for=5.0, tty="reading"))
    assert c.block == ">>>"


def test_a_screen_that_ends_with_the_question_answered_last_says_so_and_one_with_more_below_does_not():
    """ssh after its passphrase: nothing written under the answered prompt (row 3), so the screen's last question is
    the one answered (answered_last). Mirror: a new prompt under it is what asks now, and is all the block."""
    from cursorpilot.detect.classifier import undecided

    asked = "Are you sure (yes/no)? yes\r\nWarning: added.\r\n\r\nEnter passphrase for key:"
    still = undecided(GENERIC, screen_of(asked + "\r\n"), answered_to=3)
    assert still.answered_last and "Enter passphrase" in still.block
    more = undecided(GENERIC, screen_of(asked + "\r\nBad passphrase, try again: "), answered_to=3)
    assert not more.answered_last and more.block.startswith("Bad passphrase")
    assert not undecided(GENERIC, screen_of(asked + "\r\n")).answered_last  # nothing answered yet


# -- a list of links above a line prompt (issue 48) ---------------------------------------------------------------------
def _links(bullet: str, prompt: str, *, styled: frozenset[int] = frozenset(), canonical: bool | None = False,
           visible: bool = True):
    from dataclasses import replace
    text = (f"Docs:\n  {bullet} https://create-thing.dev/docs/getting-started\n  {bullet} https://create-thing.dev/docs/templates\n"
            f"  {bullet} https://github.com/create-thing/discussions\n{prompt}")
    snap = snapshot_from_text(text, at_line_end=True)
    snap = replace(snap, cursor_x=len(prompt), styled=styled, cursor_visible=visible)
    return classify(GENERIC, snap, Timing(quiet_for=2.0, tty="reading", canonical=canonical))


@pytest.mark.parametrize("bullet", ["→", "›", ">", "●", "▶"])
@pytest.mark.parametrize("prompt", ["Project name: ", "? Project name: "])
@pytest.mark.parametrize("canonical", [True, False, None])
def test_trap_links_bulleted_with_a_menus_marker_are_no_options(bullet, prompt, canonical):
    """Every row marked alike is a bulleted list; a highlight marks one row among its siblings."""
    c = _links(bullet, prompt, canonical=canonical)
    assert (c.state, c.menu) == ("input", None), (c.rule_id, c.block)


@pytest.mark.parametrize("bullet", ["-", "*", "•"])
@pytest.mark.parametrize("canonical", [False, None])
def test_trap_a_link_in_colour_above_a_worded_line_prompt_is_emphasis(bullet, canonical):
    c = _links(bullet, "Project name: ", styled=frozenset({1}), canonical=canonical)
    assert (c.state, c.menu) == ("input", None), (c.rule_id, c.block)


def test_mirror_one_marked_row_among_plain_ones_is_still_a_highlight():
    text = "Which template?\n  → react\n    vue\n    svelte\n"
    c = classify(GENERIC, snapshot_from_text(text), Timing(quiet_for=2.0, tty="reading", canonical=False))
    assert c.state == "menu" and [o.label for o in c.menu.options] == ["react", "vue", "svelte"]


def test_mirror_a_styled_highlight_with_its_cursor_hidden_or_on_a_wordless_filter_is_still_a_menu():
    from dataclasses import replace
    text = "Which template?\n  react\n  vue\n  svelte\n> "
    snap = replace(snapshot_from_text(text, at_line_end=True), cursor_x=2, styled=frozenset({2}))
    for s in (snap, replace(snap, cursor_visible=False)):
        c = classify(GENERIC, s, Timing(quiet_for=2.0, tty="reading", canonical=False))
        assert c.state == "menu" and c.menu.current.label == "vue", c
