"""What the screen asks is read from facts (issue 39), on real programs and real pseudo-terminals, with rules and with a
model (the real openai SDK against the local fake): a wizard's bold question above its explanations is a line to
answer, not a menu of them; a prompt written in two parts gets one answer, after the whole; a prompt repainted in
place every 0.6 s gets one answer; a TUI that naps between short polls of its terminal gets its first dialog judged
within a second; a stray Shift Out in a binary blob leaves the prompt after it readable. The mirror (Inquirer, prompts,
clack and dialog menus still read as menus) is test_menus.py, test_screens_read_right.py and test_real_programs.py."""

from __future__ import annotations

import json

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, question_of, script, typed

pytestmark = pytest.mark.timeout(180)

EXPLAINED = [
    "Licensing:", "",
    "Do you want to license your code permissively under the MIT license?",
    "This means that any other developer or company will be legally allowed to use your code",
    "for free as long as they admit you created it.",
    "You can read more about the MIT license at https://choosealicense.com/licenses/mit.",
]
QUESTION = "Do you want to license your code permissively under the MIT license? y/(n):"

# rich (pinned with cursor-pilot) prints the wizard's question in bold cyan and reads the answer with input(): a line, in
# canonical mode, the cursor after the colon
RICH_WIZARD = f"""
from rich.console import Console
console = Console()
name = console.input("[bold]Project name:[/bold] ")
console.print()
for line in {EXPLAINED!r}:
    console.print(line, highlight=False)
answer = console.input({"[bold cyan]" + QUESTION + "[/bold cyan] "!r})
open("out.txt", "w").write(name + "," + answer + "\\n")
"""
READ_P = ("read -p 'Project name: ' name; echo; " + "".join(f"echo '{line}'; " for line in EXPLAINED)
          + f"read -p $'\\e[1;36m{QUESTION}\\e[0m ' a; echo \"$name,$a\" > out.txt")


def wizard(tmp_path, kind: str) -> list[str]:
    return script(tmp_path, "wizard", RICH_WIZARD) if kind == "rich" else ["bash", "-c", READ_P]


def model(table: dict[str, str]):
    def answer(prompt: str) -> str:
        q = question_of(prompt)
        for key, reply in table.items():
            if key in q:
                return typed(reply)
        return json.dumps({"action": "human", "text": "no idea", "submit": False})
    return answer


def deployed(pilot, command: list[str], answerer: str, tmp_path):
    """A run of a program whose dialog asks "Deploy the build?", answered y by a rule or by the model (asked once); the
    program wrote what it read to out.txt."""
    if answerer == "rules":
        r = pilot(command, "--answer", "Deploy the build=y", "--timeout", "20s")
    else:
        with FakeLLM(answer=model({"Deploy the build": "y"})) as server:
            r = pilot(command, "--provider", "openai", "--base-url", server.url + "/v1", "--timeout", "20s",
                      env={"OPENAI_API_KEY": KEY})
        assert len(server.requests) == 1
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "y"
    return r


def schema(request: dict) -> str:
    return json.dumps(request["json"].get("response_format") or {})


@pytest.mark.parametrize("kind", ["rich", "read -p"])
@pytest.mark.parametrize("answerer", ["rules", "model"])
def test_a_wizards_bold_question_above_its_explanations_is_a_line_not_a_menu(pilot, tmp_path, kind, answerer):
    """The bold question was taken for a menu's highlighted row and the paragraphs above it for its options: the
    model's answer schema allowed only those, and `y` could not be answered."""
    table = {"Project name": "proj", "MIT license": "y"}
    if answerer == "rules":
        r = pilot(wizard(tmp_path, kind), "--answer", "Project name=proj", "--answer", "MIT license=y")
    else:
        with FakeLLM(answer=model(table)) as server:
            r = pilot(wizard(tmp_path, kind), "--provider", "openai", "--base-url", server.url + "/v1", env={"OPENAI_API_KEY": KEY})
        assert len(server.requests) == 2
        license_request = next(q for q in server.requests if "MIT license" in question_of(q["json"]["messages"][-1]["content"]))
        assert "This means that any" not in schema(license_request)  # no enum of the explanations
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "proj,y\n"
    assert r.of("menu_choice") == [] and r.of("escalation") == []
    asked = [s for s in r.of("screen_state") if s["prompt"] and "MIT license? y/(n):" in s["prompt"]]
    assert asked and "canonical mode (reads a line)" in asked[0]["facts"]


TWO_PARTS = """
import select, sys
sys.stdout.write("Reuse the exis"); sys.stdout.flush()
select.select([sys.stdin], [], [], 0.3)  # 0.3 s with a timer beside its terminal: the kernel sees it polling
sys.stdout.write("ting config? [y/N] "); sys.stdout.flush()
open("out.txt", "w").write(sys.stdin.readline())
"""


@pytest.mark.parametrize("answerer", ["rules", "model"])
def test_a_prompt_written_in_two_parts_gets_one_answer_after_the_whole(pilot, tmp_path, answerer):
    """Judged 80 ms after `Reuse the exis`, no rule matched the half and the run stopped (exit 3)."""
    command = script(tmp_path, "two_parts", TWO_PARTS)
    if answerer == "rules":
        r = pilot(command, "--answer", "Reuse the existing config=y")
    else:
        with FakeLLM(answer=model({"Reuse the existing config? [y/N]": "y"})) as server:
            r = pilot(command, "--provider", "openai", "--base-url", server.url + "/v1", env={"OPENAI_API_KEY": KEY})
        assert len(server.requests) == 1
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "y\n"
    assert [a["reply"] for a in r.of("answer")] == ["y"] and r.of("escalation") == []


REPAINTED = """
import select, sys, time
def ask(question):
    n = 0
    while True:
        # the question, then a clock beside it, the cursor back after the question: repainted every 0.6 s
        sys.stdout.write(f"\\r\\x1b[K{question} \\x1b7\\x1b[50G(waiting {n * 0.6:.1f}s)\\x1b8"); sys.stdout.flush()
        if select.select([sys.stdin], [], [], 0.6)[0]:
            time.sleep(0.3)  # it works on the answer a moment, the question still shown
            return sys.stdin.readline().strip()
        n += 1
first = ask("Proceed? [y/n]")
sys.stdout.write("\\r\\n")
second = ask("Continue? [y/n]")
open("out.txt", "w").write(f"{first},{second}\\n")
"""


def test_a_prompt_repainted_in_place_every_0_6_s_gets_one_answer(pilot, tmp_path):
    """`Proceed? [y/n]` with a clock beside it got y, then, at the next repaint, y again: the repaint was taken for
    the program's answer and the same question judged anew."""
    r = pilot(script(tmp_path, "repainted", REPAINTED), "--answer", "Proceed=y", "--answer", "Continue=n")
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "y,n\n"
    assert [a["reply"] for a in r.of("answer")] == ["y", "n"] and r.of("not_taken") == [] and r.of("escalation") == []


NAPPER = """
import os, select, sys, termios, time, tty
tty.setraw(0)
# a full-screen TUI's event loop: poll the terminal for 1 ms, sleep 30 ms (crossterm's poll(1ms) in a Rust loop)
sys.stdout.write("\\x1b[?1049h\\x1b[2J\\x1b[3;5HDeploy the build to production? [y/n] "); sys.stdout.flush()
open("drawn.txt", "w").write(repr(time.monotonic()))
while True:
    if select.select([0], [], [], 0.001)[0]:
        key = os.read(0, 16)
        break
    time.sleep(0.03)
sys.stdout.write("\\x1b[?1049l"); sys.stdout.flush()
open("out.txt", "w").write(key.decode()[:1])
"""


@pytest.mark.parametrize("answerer", ["rules", "model"])
def test_a_tui_that_naps_between_short_polls_gets_its_first_dialog_judged_within_a_second(pilot, tmp_path, answerer):
    """It was recorded as `kernel.busy` (asleep at almost every look): its dialog was never judged, and the run ended
    silently by its timeout (exit 4)."""
    command = script(tmp_path, "napper", NAPPER)
    r = deployed(pilot, command, answerer, tmp_path)
    drawn = float((tmp_path / "drawn.txt").read_text())
    first_key = r.of("keys_sent")[0]["mono"]
    assert first_key - drawn < 1.0, f"judged {first_key - drawn:.2f}s after the dialog was drawn"


def test_a_binary_blob_with_a_stray_shift_out_then_a_prompt_matches_the_rule(pilot, tmp_path):
    """0x0E switched pyte to its G1, line drawing: `Continue? [y/n]` showed as `C⎺┼├␋┼┤␊? [≤/┼]` and no rule matched."""
    (tmp_path / "blob.bin").write_bytes(bytes(range(0x80, 0xA0)) + b"\x0e\x01\x02\x7fELF\x00\x00" + bytes(range(0xE0, 0xF0)))
    body = "cat blob.bin; echo; read -p 'Continue? [y/n] ' a; echo \"$a\" > out.txt"
    r = pilot(["bash", "-c", body], "--answer", "Continue=y")
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "y\n"
    assert [a["rule_id"] for a in r.of("answer")] == ["generic.yes_no"]
