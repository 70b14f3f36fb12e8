"""Real programs nobody tuned a profile for, driven as a user would: every quiet prompt gets a decision, and what was
decided reaches the program byte for byte, in the keys its terminal mode expects."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM, Step
from tests.helpers import KEY, question_of, script, typed

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]
CREATE_VITE = ROOT / "tests" / "npm" / "node_modules" / "create-vite" / "index.js"


@pytest.mark.skipif(shutil.which("npm") is None, reason="needs npm")
def test_npm_init_every_read_prompt_answered(pilot, tmp_path):
    """npm 11: 'package name: (work)' sat on screen for 120 s (the prompt rule wanted a trailing space)."""
    rules = """
- {match: 'package name', reply: demo-app}
- {match: 'description', reply: A demo}
- {match: 'test command', reply: vitest}
- {match: 'author', reply: Ada}
- {match: 'license', reply: MIT}
- {match: 'Is this OK', reply: 'yes'}
- {match: ':', reply: ''}
"""
    r = pilot(["npm", "init"], rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    package = json.loads((tmp_path / "package.json").read_text())
    assert (package["name"], package["description"], package["license"], package["scripts"]["test"]) == ("demo-app", "A demo", "MIT", "vitest")
    assert {a["rule_id"] for a in r.of("answer")} == {"generic.library_input", "generic.yes_no"}


@pytest.mark.skipif(not CREATE_VITE.exists(), reason="needs `npm ci --prefix tests/npm` (.ci/run does it)")
def test_create_vite_started_as_node_index_js_answered_by_a_model(pilot, tmp_path):
    """@clack/prompts as `node …/create-vite/index.js` (profile generic): a text field with the cursor hidden, two
    selects, a yes/no confirm. One request per prompt; the confirm gets one key, no Enter."""
    def model(prompt):
        q = question_of(prompt)
        if "Project name" in q:
            return typed("shop-app")
        if "framework" in q:
            return typed("Svelte")
        if "variant" in q:
            return typed("TypeScript")
        if "start now" in q:
            return typed("No")
        return typed("? unexpected")

    with FakeLLM(answer=model) as server:
        r = pilot(["node", str(CREATE_VITE)], "--provider", "openai", "--base-url", server.url + "/v1",
                  "--prompt", "Scaffold a Svelte app with TypeScript named shop-app; install nothing.", env={"OPENAI_API_KEY": KEY})
        calls = len(server.requests)
        first = server.requests[0]["json"] if server.requests else {}
    assert r.code == 0, r.stdout + r.stderr
    package = json.loads((tmp_path / "shop-app" / "package.json").read_text())
    assert package["name"] == "shop-app" and "svelte" in json.dumps(package) and (tmp_path / "shop-app" / "tsconfig.json").exists()
    assert calls == len(r.of("answer")) == 4
    assert [k["keys"] for k in r.of("keys_sent")][-1] == "<key:n>"
    assert first["response_format"]["json_schema"]["name"] == "answer"  # structured: what to type, exactly


def test_cookiecutter_prompts_and_its_numbered_choice(pilot, tmp_path):
    rules = """
- {match: 'project_name', reply: Demo App}
- {match: 'project_slug', reply: ''}
- {match: 'Choose from', reply: '3'}
- {match: 'use_docker', reply: 'y'}
"""
    r = pilot([sys.executable, "-m", "cookiecutter", str(ROOT / "tests" / "data" / "cookiecutter-app")], rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert "License: Apache-2.0. Docker: y." in (tmp_path / "demo-app" / "README.md").read_text()


def test_python_input_answers_come_at_once_when_the_kernel_says_it_reads(pilot, tmp_path):
    """input() blocks in read() on the terminal: no 1.5 s of silence per prompt, and no rule needed to know it asks."""
    program = script(tmp_path, "ask", """
        answers = [input(q) for q in ("Server name> ", "Port number> ", "Log level> ", "Admin email> ", "Region> ")]
        print("GOT", "|".join(answers))
    """)
    rules = "- {match: 'Server', reply: web1}\n- {match: 'Port', reply: '8080'}\n- {match: 'Log', reply: debug}\n" \
            "- {match: 'email', reply: a@b.c}\n- {match: 'Region', reply: eu-west}\n"
    r = pilot(program, rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    assert b"GOT web1|8080|debug|a@b.c|eu-west" in (r.log / "session.raw").read_bytes()
    answers = r.of("answer")
    assert len(answers) == 5 and all(a["rule_id"] == "generic.waiting_input" for a in answers)
    started = r.of("program_started")[0]["mono"]
    assert answers[-1]["mono"] - started < 4.0  # five prompts: 7.5 s of waiting at 1.5 s each before


def test_sphinx_quickstart_questions_with_defaults_in_brackets(pilot, tmp_path):
    rules = """
- {match: 'Separate source and build', reply: 'y'}
- {match: 'Project name', reply: Demo Docs}
- {match: 'Author name', reply: Ada}
- {match: 'Project release', reply: '0.1'}
- {match: 'Project language', reply: ''}
"""
    r = pilot([str(Path(sys.executable).parent / "sphinx-quickstart"), str(tmp_path / "docs")], rules=rules)
    assert r.code == 0, r.stdout + r.stderr
    conf = (tmp_path / "docs" / "source" / "conf.py").read_text()
    assert "project = 'Demo Docs'" in conf and "author = 'Ada'" in conf and "release = '0.1'" in conf
    started = r.of("program_started")[0]["mono"]
    assert r.of("answer")[-1]["mono"] - started < 8.0  # readline waits in select(): the kernel can't tell, the screen rules do


def test_git_add_p_hunk_question(pilot, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    (repo / "a.txt").write_text("one\n")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "a"], check=True)
    (repo / "a.txt").write_text("one\ntwo\n")
    r = pilot(["git", "-C", str(repo), "add", "-p"], rules="- {match: 'Stage this hunk', reply: 'y'}\n")
    assert r.code == 0, r.stdout + r.stderr
    staged = subprocess.run([*git, "diff", "--cached", "--stat"], capture_output=True, text=True).stdout
    assert "a.txt" in staged and r.of("answer")[0]["rule_id"] == "generic.yes_no"


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="needs sqlite3")
def test_sqlite3_prompt_no_rule_knows(pilot, tmp_path):
    replies = '["create table t(x); insert into t values (42);", ".save db.sqlite", ".quit"]'
    r = pilot(["sqlite3"], "--provider", "mock", rules=replies)
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "db.sqlite").exists() and [a["rule_id"] for a in r.of("answer")] == ["generic.waiting_input"] * 3


def test_a_quiet_screen_no_rule_explains_escalates_with_rules_only(pilot, tmp_path):
    """A Node-like program waiting in poll with a prompt no rule knows: a decision within undecided_after, never a timeout."""
    program = script(tmp_path, "poll", """
        import select, sys, tty
        tty.setcbreak(0)
        sys.stdout.write("Enter the magic word, then press ctrl-d\\r\\n")
        sys.stdout.flush()
        select.select([0], [], [], 60)
    """)
    r = pilot(program, rules="- {match: 'nothing matches this', reply: x}\n")
    assert r.code == 3, r.stdout + r.stderr
    [esc] = r.of("escalation")
    assert "magic word" in esc["prompt"] and esc["rule_id"] == "generic.undecided"
    assert esc["mono"] - r.of("program_started")[0]["mono"] < 8


def test_a_model_may_say_wait_and_is_not_asked_again_about_the_same_screen(pilot, tmp_path):
    program = script(tmp_path, "progress", """
        import select, sys, time, tty
        tty.setcbreak(0)
        print("Downloading the index (this takes a while)", flush=True)
        end = time.monotonic() + 7
        while time.monotonic() < end:  # a progress timer's ticks (one 7 s wait would be a read: pty/kernel.py)
            select.select([0], [], [], 0.1)
        sys.stdout.write("Proceed with the install? (y/n) "); sys.stdout.flush()
        print("GOT", sys.stdin.read(1))
    """)
    def model(prompt):
        return typed("y") if "Proceed" in question_of(prompt) else json.dumps({"action": "wait", "text": "", "submit": False})

    with FakeLLM(answer=model) as server:
        r = pilot(program, "--provider", "openai", "--base-url", server.url + "/v1", env={"OPENAI_API_KEY": KEY})
        calls = len(server.requests)
    assert r.code == 0, r.stdout + r.stderr
    assert len(r.of("wait")) == 1 and calls == 2
    assert r.of("run_finished")[0]["counters"]["waits"] == 1


def test_python_string_answer_reaches_the_repl_byte_for_byte(pilot, tmp_path):
    """The model answered 'active' (a Python string); the quotes were taken for wrapping and active raised NameError."""
    def model(prompt):
        screen = prompt.split("# Screen", 1)[1]
        return typed("exit()") if "'active'" in screen.split("# The question")[0] else typed("'active'")

    with FakeLLM(answer=model) as server:
        r = pilot([sys.executable, "-q", "-i", "-c", "print('Type the default status as a Python string')"],
                  "--provider", "openai", "--base-url", server.url + "/v1", env={"OPENAI_API_KEY": KEY})
    raw = (r.log / "session.raw").read_bytes()
    assert r.code == 0, r.stdout + r.stderr
    assert b">>> 'active'\r\n'active'" in raw and b"NameError" not in raw


def test_quotes_survive_the_one_line_grammar_too(pilot, tmp_path):
    """A server without structured output (400 on response_format: json_schema, then json_object) gets the one-line
    grammar; quotes still go as given."""
    program = script(tmp_path, "sql", """
        print("GOT", input("Default value (an SQL literal)> "))
    """)
    with FakeLLM() as server:
        refused = b'{"error": {"message": "response_format is not supported by this server", "type": "invalid_request_error"}}'
        server.script = [Step(status=400, raw_body=refused), Step(status=400, raw_body=refused), Step(text="'it''s'")]
        r = pilot(program, "--provider", "openai", "--base-url", server.url + "/v1", env={"OPENAI_API_KEY": KEY})
    assert r.code == 0, r.stdout + r.stderr
    assert b"GOT 'it''s'" in (r.log / "session.raw").read_bytes()
    assert [r["json"].get("response_format", {}).get("type") for r in server.requests] == ["json_schema", "json_object", None]


def test_questionary_confirm_takes_one_key_and_its_enter_does_not_leak_into_the_next_question(pilot, tmp_path):
    """prompt_toolkit's confirm submits on y: an Enter after it accepted the next question's default."""
    program = script(tmp_path, "confirm", """
        import questionary
        go = questionary.confirm("Continue with the setup?").ask()
        name = questionary.text("Project name?", default="untitled").ask()
        print("GOT", go, name)
    """)
    r = pilot(program, rules="- {match: 'Continue with the setup', reply: 'y'}\n- {match: 'Project name', reply: shop}\n")
    assert r.code == 0, r.stdout + r.stderr
    raw = (r.log / "session.raw").read_bytes()
    assert b"GOT True untitledshop" in raw or b"GOT True shop" in raw
    assert r.of("enter_skipped")


CURSES_MENU = """
    import curses, sys

    def main(scr):
        curses.curs_set(0)
        scr.keypad(True)  # ncurses turns on application cursor keys: arrows arrive as ESC O A ...
        items, at = ["Apple", "Banana", "Cherry"], 0
        while True:
            scr.erase()
            scr.addstr(0, 0, "Which fruit should be packed?")
            for i, item in enumerate(items):
                scr.addstr(2 + i, 2, item, curses.A_REVERSE if i == at else 0)
            scr.refresh()
            key = scr.getch()
            if key == curses.KEY_DOWN:
                at = min(at + 1, 2)
            elif key == curses.KEY_UP:
                at = max(at - 1, 0)
            elif key in (10, 13, curses.KEY_ENTER):
                return items[at]
            elif key == 27:
                return "CANCELLED"

    choice = curses.wrapper(main)
    print("CHOSE", choice)
    sys.exit(0 if choice != "CANCELLED" else 1)
"""


def test_arrows_reach_an_ncurses_menu_in_application_cursor_mode(pilot, tmp_path):
    """With keypad() on, ESC [ B reads as a lone Esc (Cancel); a real terminal sends ESC O B."""
    r = pilot(script(tmp_path, "menu", CURSES_MENU), rules="- {match: 'Which fruit', reply: Cherry}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert b"CHOSE Cherry" in (r.log / "session.raw").read_bytes()
    assert [k["hex"] for k in r.of("keys_sent")][:2] == ["1b4f42", "1b4f42"]


def test_claude_style_numbered_menu_drawn_by_a_program_the_generic_profile_drives(pilot):
    from tests.conftest import SIM

    r = pilot([*SIM, "menu", "menu-claude-permission"], "--profile", "generic",
              rules="- {match: 'Do you want to proceed', reply: 'Yes'}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert [e["chosen"] for e in r.sim_events("select")][0] == ["Yes"]
    assert r.of("answer")[0]["rule_id"] == "generic.menu"


SLOW_FILTER = """
    import curses, sys, time

    ITEMS = ["apple", "banana", "cherry", "damson"]

    def main(scr):
        scr.keypad(True)
        scr.timeout(50)
        typed, query, redraw_at = "", "", 0.0
        while True:
            now = time.monotonic()
            if typed != query and now >= redraw_at:  # the list follows the query a while after each key, like fzf's reload
                query = typed
            shown = [i for i in ITEMS if query in i]
            scr.erase()
            scr.addstr(0, 0, "Filter the fruit list: " + query)
            for row, item in enumerate(shown):
                scr.addstr(2 + row, 2, item)  # Enter picks the first one shown
            scr.move(0, 23 + len(query))
            scr.refresh()
            key = scr.getch()
            if key in (10, 13):
                return shown[0] if shown else "NOTHING"
            if 32 <= key < 127:
                typed += chr(key)
                redraw_at = time.monotonic() + 0.4

    print("PICKED", curses.wrapper(main))
"""


def test_enter_waits_until_the_typed_text_shows(pilot, tmp_path):
    """A filter that catches up with the typed text a while later: Enter sent on a timer took the old highlight."""
    r = pilot(script(tmp_path, "filter", SLOW_FILTER), rules="- {match: 'Filter the fruit list', reply: cherry}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert b"PICKED cherry" in (r.log / "session.raw").read_bytes()
    assert not r.of("echo_not_seen")


def test_a_single_key_without_enter_quits_a_pager(pilot, tmp_path):
    """less acts on q alone: the model says so (submit false), or the grammar's <key:q>."""
    (tmp_path / "notes.txt").write_text("\n".join(f"line {i}" for i in range(200)) + "\n")
    def model(prompt):
        return typed("q", submit=False)

    with FakeLLM(answer=model) as server:
        r = pilot(["less", str(tmp_path / "notes.txt")], "--provider", "openai", "--base-url", server.url + "/v1",
                  env={"OPENAI_API_KEY": KEY, "LESS": ""})
    assert r.code == 0, r.stdout + r.stderr
    assert [k["keys"] for k in r.of("keys_sent")] == ["q"]


@pytest.mark.skipif(shutil.which("fzf") is None, reason="needs fzf")
def test_a_query_typed_into_fzf_over_a_long_list_picks_what_it_filtered(pilot, tmp_path):
    """fzf draws the query at once and filters its 300,001 items after it, in threads of its own (30-40 ms here),
    while another thread reads keys: an Enter sent as soon as the query showed took the old first item, every time.
    Enter waits until the kernel sees none of its threads at work (nor still loading the list, when its screen was
    judged before the list was all in: the rule answers whatever count it shows)."""
    items, picked = tmp_path / "items.txt", tmp_path / "picked.txt"
    items.write_text("".join(f"item-{n}\n" for n in range(1, 300001)) + "cherry\n")
    (tmp_path / "pick.sh").write_text(f"fzf < {items} > {picked}\n")
    r = pilot(["bash", str(tmp_path / "pick.sh")], rules="- {match: '\\d+/\\d+', reply: cherry}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert picked.read_text().strip() == "cherry"
    assert [k["keys"] for k in r.of("keys_sent")] == ["cherry", "<enter>"] and not r.of("enter_while_working")
