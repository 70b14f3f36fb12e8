"""The menu model: options and highlight read from rendered rows, and replies turned into keys."""

from pathlib import Path

import pytest

from cursorpilot.detect.menu import keys_for, numbered, parse

CAPTURES = Path(__file__).resolve().parents[1] / "data" / "captures"

GOLDEN = {  # capture -> (highlighted label, every label)
    "claude-2.txt": ("Yes, I trust this folder", ["Yes, I trust this folder", "No, exit"]),
    "claude-3.txt": ("No (recommended)", ["Yes", "No (recommended)"]),
    "codex-1.txt": ("Sign in with ChatGPT", ["Sign in with ChatGPT", "Sign in with Device Code", "Sign in another way"]),
    "codex-2.txt": ("Sign in with Device Code", ["Sign in with ChatGPT", "Sign in with Device Code", "Sign in another way"]),
    "codex-3.txt": ("Use an OpenAI API key", ["Use an OpenAI API key", "Use Amazon Bedrock"]),
    "codex-5.txt": ("Trust and continue", ["Trust and continue", "Back to Agent Command Center"]),
    "gemini-1.txt": ("Trust folder (proj-gemini.abcd)", ["Trust folder (proj-gemini.abcd)", "Trust parent folder (work)", "Don't trust"]),
    "gemini-2.txt": ("Trust parent folder (work)", ["Trust folder (proj-gemini.abcd)", "Trust parent folder (work)", "Don't trust"]),
    "gemini-3.txt": ("Sign in with Google", ["Sign in with Google", "Use Gemini API Key", "Vertex AI"]),
    # the real agents, offline (tests/agents_lane/refresh_captures.py; versions in versions.yaml)
    "claude-real-api-key.txt": ("No (recommended)", ["Yes", "No (recommended)"]),
    "claude-real-trust.txt": ("No, exit", ["No, exit", "Yes, I trust this folder"]),
    "claude-real-permission.txt": ("Yes", ["Yes", "Yes, and always allow access to /home/user/work from this project",
                                           "Yes, and switch to auto mode · auto mode handles these prompts for you", "No"]),
    "claude-real-ask-user-question.txt": ("PostgreSQL", ["PostgreSQL", "SQLite", "Type something.", "Chat about this"]),
    "claude-real-ask-user-question-multi.txt": ("Auth", ["Auth", "Metrics", "Type something", "Submit", "Chat about this"]),
    "codex-real-approval.txt": ("Yes, proceed (y)", ["Yes, proceed (y)", "Yes, and don't ask again for commands that start with `touch a.txt` (p)",
                                                    "No, and tell Codex what to do differently (esc)"]),
    "gemini-real-approval.txt": ("Allow once", ["Allow once", "Allow for this session", "No, suggest changes (esc)"]),
    "gemini-real-trust.txt": ("Trust folder (work)", ["Trust folder (work)", "Trust parent folder (0)", "Don't trust"]),
    "gemini-real-usage-limit.txt": ("Keep trying", ["Keep trying", "Stop"]),
}
SCREENS = sorted(p.name for p in CAPTURES.glob("*.txt") if not p.name.endswith((".escapes.txt", "-raw-redraw.txt")))


@pytest.mark.parametrize("name", SCREENS)
def test_golden_menus_in_the_captures(name):
    menu = parse((CAPTURES / name).read_text())
    if name not in GOLDEN:
        assert menu is None, f"{name}: no menu on this screen, found {menu}"  # idle composers, busy screens, API-key boxes
        return
    current, labels = GOLDEN[name]
    assert menu is not None and menu.current.label == current
    assert [o.label for o in menu.options] == labels and menu.multi == name.endswith("-multi.txt")


def test_claude_multi_select_confirms_on_its_submit_row():
    """Claude's AskUserQuestion multi-select: Enter on an option toggles it; the selection is sent from Submit."""
    menu = parse((CAPTURES / "claude-real-ask-user-question-multi.txt").read_text())
    keys, chosen = keys_for(menu, "Auth, Metrics")
    assert keys == "<space><down><space><down><down><enter>" and [o.label for o in chosen] == ["Auth", "Metrics"]


def test_codex_descriptions_belong_to_their_option():
    menu = parse((CAPTURES / "codex-1.txt").read_text())
    assert menu.options[2].detail == "Use an API key or another provider"
    assert [o.number for o in menu.options] == [1, 2, 3]


@pytest.mark.parametrize("rows, current, labels, checked", [
    # Inquirer / Ink select
    ("? Which framework?\n❯ React\n  Vue\n  Svelte\n", "React", ["React", "Vue", "Svelte"], None),
    # Inquirer checkbox
    ("? Toppings\n ◉ Cheese\n❯◯ Ham\n ◯ Pineapple\n", "Ham", ["Cheese", "Ham", "Pineapple"], [True, False, False]),
    # questionary checkbox: pointer », boxes ● / ○, a ticked box before the pointer
    ("? Toppings\n   ● Cheese\n » ○ Ham\n   ○ Olives\n", "Ham", ["Cheese", "Ham", "Olives"], [True, False, False]),
    # @clack/prompts radio with an option on two lines, inside the left rail
    ("◆  Project type\n│  ○ TypeScript\n│  ● Go (experimental,\n│    not for production)\n│  ○ Rust\n└\n", "Go (experimental,",
     ["TypeScript", "Go (experimental,", "Rust"], None),
    # the highlighted row is "No"; a divider and a "Type something" row
    ("Allow the edit?\n  1. Yes\n❯ 2. No\n  ────────\n  3. Type something.\n", "No", ["Yes", "No", "Type something."], None),
])
def test_menu_shapes(rows, current, labels, checked):
    menu = parse(rows)
    assert menu is not None and menu.current.label == current
    assert [o.label for o in menu.options] == labels
    assert [o.checked for o in menu.options] == (checked or [None] * len(labels))
    assert menu.multi == (checked is not None)


def test_meta_rows_are_marked():
    menu = parse("Allow the edit?\n  1. Yes\n❯ 2. No\n  3. Type something.\n")
    assert [o.meta for o in menu.options] == [False, False, True]


@pytest.mark.parametrize("rows", [
    "Tips for getting started:\n1. Create GEMINI.md files\n2. /help for more information\n",  # a numbered list, no highlight
    "> Quoting a long line of the agent's prose, which is not an option of anything at all, only text in a reply\n  more text\n",
    "› Ask Codex to do anything\n\n  gpt default · ~/proj\n",  # an idle composer with a footer below a blank row
])
def test_not_menus(rows):
    assert parse(rows) is None


def test_replies_become_arrows_from_the_highlight_then_enter():
    menu = parse("Allow the edit?\n  1. Yes\n❯ 2. No\n  3. Always allow\n")
    assert keys_for(menu, "Yes") == ("<up><enter>", [menu.options[0]])
    assert keys_for(menu, "3")[0] == "<down><enter>"  # a number names the option numbered so; digits are never typed
    assert keys_for(menu, "always")[0] == "<down><enter>"  # a unique prefix
    assert keys_for(menu, "No")[0] == "<enter>"
    assert keys_for(menu, "a") is None  # a single letter is a key the prompt offers: typed as it is
    assert keys_for(menu, "<down><enter>") is None  # keys are typed as they are
    assert keys_for(menu, "Maybe") is None


def test_y_answering_a_numbered_yes_no_menu_picks_yes_not_a_bare_y():
    """A rule's or a model's `y` was typed as a bare y; the menu ignored it and the run escalated "did not react"."""
    menu = parse("Do you want to proceed?\n❯ 1. Yes\n  2. Yes, and don't ask again for this command\n  3. No\n")
    assert keys_for(menu, "y") == ("<enter>", [menu.options[0]])
    assert keys_for(menu, "N")[0] == "<down><down><enter>"
    hotkeys = parse("Run this command?\n→ Run (once) (y)\n  Skip (esc or n)\n")
    assert keys_for(hotkeys, "y") is None and keys_for(hotkeys, "n") is None  # letters the menu offers as keys
    assert keys_for(parse("Pick one\n❯ [y] Yes - enable\n  [n] No\n"), "y") is None
    assert keys_for(parse("? Colour\n❯ red\n  blue\n"), "y") is None  # no Yes to pick: typed as it is


def test_an_ambiguous_label_is_not_guessed():
    menu = parse("? Pick\n❯ Deploy to staging\n  Deploy to production\n")
    assert keys_for(menu, "deploy") is None
    assert keys_for(menu, "production")[0] == "<down><enter>"


def test_a_multi_select_reply_is_the_final_selection():
    menu = parse("? Checks\n❯◯ lint\n ◯ unit tests\n ◯ e2e\n ◉ benchmarks\n")
    keys, chosen = keys_for(menu, "lint, unit tests")
    assert [o.label for o in chosen] == ["lint", "unit tests"]
    assert keys == "<space><down><space><down><down><space><enter>"  # tick lint and unit tests, untick benchmarks


def test_a_reverse_video_row_is_the_highlight_when_no_marker_is_drawn():
    from cursorpilot.channels.pty.screen import TerminalScreen

    screen = TerminalScreen(40, 8)
    screen.feed(b"? Which framework?\r\n  React\r\n  \x1b[7mVue\x1b[27m\r\n  Svelte\r\n")
    snap = screen.snapshot()
    assert snap.styled == {2}
    menu = parse(list(snap.lines), snap.styled)
    assert menu.current.label == "Vue" and [o.label for o in menu.options] == ["React", "Vue", "Svelte"]
    assert parse(list(snap.lines)) is None  # without the styling there is no highlight to go by


def test_a_bare_yes_or_no_picks_the_first_option_starting_with_it():
    menu = parse("Would you like to run the following command?\n› 1. Yes, proceed (y)\n"
                 "  2. Yes, and don't ask again for this command (p)\n  3. No, and tell Codex what to do differently (esc)\n")
    assert keys_for(menu, "Yes")[1][0].label == "Yes, proceed (y)"  # once, not always
    assert keys_for(menu, "no")[1][0].number == 3
    assert keys_for(menu, "yes, and don't ask again")[1][0].number == 2


def test_a_highlight_in_its_own_colour_counts_but_a_menu_in_one_colour_has_none():
    from cursorpilot.channels.pty.screen import TerminalScreen

    screen = TerminalScreen(40, 8)
    screen.feed(b"? Which framework?\r\n  React\r\n  \x1b[36mVue\x1b[39m\r\n  Svelte\r\n")
    snap = screen.snapshot()
    assert parse(list(snap.lines), snap.styled).current.label == "Vue"
    screen = TerminalScreen(40, 8)
    screen.feed(b"? Which framework?\r\n\x1b[36m  React\r\n  Vue\r\n  Svelte\x1b[39m\r\n")  # every option cyan: no highlight
    snap = screen.snapshot()
    assert parse(list(snap.lines), snap.styled) is None


def test_a_dialogs_buttons_are_a_menu_across_focused_where_the_cursor_is():
    """newt's <Yes> <No>: 'no' was typed as n-o-Enter; newt ignores letters, and Enter pressed the focused <Yes>."""
    from cursorpilot.detect.menu import buttons

    rows = ["   Keep the existing settings?", "", "      <Yes>          <No>  "]
    menu = buttons(rows, 7, 2)
    assert menu is not None and [o.label for o in menu.options] == ["Yes", "No"] and menu.current.label == "Yes"
    assert keys_for(menu, "no") == ("<right><enter>", [menu.options[1]])
    assert keys_for(buttons(rows, 21, 2), "yes")[0] == "<left><enter>"
    assert buttons(rows, 0, 0) is None  # the cursor on no button: nothing is focused, nothing to move from


def test_a_numbered_shell_menu_is_answered_with_the_number_typed():
    """bash `select`: no highlight, digits are what it reads; a label, a unique part of one or the number names it."""
    menu = numbered("1) apple\n2) banana\n3) cherry\n#? ")
    assert menu.typed and menu.shown_highlight is None
    assert keys_for(menu, "banana") == ("2<enter>", [menu.options[1]])
    assert keys_for(menu, "cher")[0] == "3<enter>"
    assert keys_for(menu, "3")[0] == "3<enter>"
    assert keys_for(menu, "kiwi") is None and keys_for(menu, "7") is None
    assert keys_for(numbered("[1] Yes, go ahead\n[2] No\nChoice: "), "y")[0] == "1<enter>"  # y is its Yes
    assert "answered by typing its number" in menu.describe()
