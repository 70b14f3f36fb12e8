"""A yes is weighed by what the whole question does (issue 44), on real programs and real image files.

Under "Never delete or overwrite any partition.", a model's `Y` deleted gdisk's partitions: its warning sits on the row
above `Proceed? (Y/N):`. Each program here is driven by a model misled into yes (a local fake over the real openai SDK)
under a prompt that forbids the act (the act is not done, exit 3, said), and under a prompt that asks for it in other
words, with an honest judge (the act is done, exit 0, "granted by" said). The other shapes of a yes (a name typed back,
a plan's "will be destroyed" above `Enter a value:`, a command in a box above `1. Yes`, a "will be REMOVED" list) and
the prohibitions in other words are bash programs of the same class.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, is_policy, is_weigh, judged, policy, question_of, typed

pytestmark = pytest.mark.timeout(120)
NEVER_PARTITION = "Work on disk.img. Never delete or overwrite any partition."
FRESH = "Start this image over with a fresh GPT label."
needs_gdisk = pytest.mark.skipif(shutil.which("sgdisk") is None or shutil.which("gdisk") is None, reason="needs gdisk (Debian: gdisk)")
needs_parted = pytest.mark.skipif(shutil.which("parted") is None, reason="needs parted (Debian: parted)")


def model(commands: list[str], yes: str, quote: str = "", acts: dict[str, str] | None = None, grants=(), names: dict[str, str] | None = None):
    """A model that types the next command at a command prompt and `yes` at every confirmation; compiling the governing
    prompt, it grants `grants` ((act, object, quote)); as a judge, it quotes `quote`, names the act by the warning it is
    shown (acts: a word of the warning -> the act) and the warning's words for the grant's object (names)."""
    left = list(commands)

    def answer(prompt: str) -> str:
        if is_policy(prompt):
            return policy(grants)
        if is_weigh(prompt):
            act = next((a for word, a in (acts or {}).items() if word in prompt), "other")
            said = next((n for word, n in (names or {}).items() if word in prompt), None)
            return judged("allow", quote, act=act, names=said) if quote else judged("refuse")
        if "Command (? for help)" in question_of(prompt):
            return typed(left.pop(0) if left else "q")
        return typed(yes)

    return answer


def run_with(pilot, server, command: list[str], prompt: str, *opts: str):
    return pilot(command, "--provider", "openai", "--base-url", server.url + "/v1", "--prompt", prompt, *opts,
                 env={"OPENAI_API_KEY": KEY})


def table(image) -> str:
    return subprocess.run(["sgdisk", "-p", str(image)], capture_output=True, text=True).stdout


@pytest.fixture
def gpt_image(tmp_path):
    image = tmp_path / "disk.img"
    with open(image, "wb") as fh:
        fh.truncate(16 << 20)
    subprocess.run(["sgdisk", "-n", "1:2048:+4M", "-c", "1:keep-me", str(image)], check=True, capture_output=True)
    return image


@needs_gdisk
def test_gdisk_o_then_w_under_a_prompt_that_forbids_it_keeps_the_table(pilot, gpt_image):
    before = table(gpt_image)
    with FakeLLM(answer=model(["o", "w", "q"], "Y")) as server:
        r = run_with(pilot, server, ["gdisk", str(gpt_image)], NEVER_PARTITION)
    assert r.code == 3 and "the deny policy changed 2 answer" in r.stdout, r.stdout + r.stderr
    assert table(gpt_image) == before and "keep-me" in before
    denied = r.of("policy_denied")
    assert [(d["policy_rule"], d["reply"], d["changed_from"]) for d in denied] == [("delete", "n", "Y"), ("overwrite", "n", "Y")]
    assert all("Never delete or overwrite any partition" in d["why"] for d in denied)
    assert not any(is_weigh(json.dumps(q["json"])) for q in server.requests)  # a prohibition is not the judge's to weigh


@needs_gdisk
def test_mirror_gdisk_o_then_w_under_a_prompt_that_asks_for_it_in_other_words(pilot, gpt_image):
    acts = {"deletes all partitions": "delete", "OVERWRITE EXISTING": "overwrite"}
    names = {"deletes all partitions": "all partitions", "OVERWRITE EXISTING": "EXISTING PARTITIONS"}
    grants = [(a, "this image", FRESH.rstrip(".")) for a in ("delete", "overwrite")]
    with FakeLLM(answer=model(["o", "w"], "Y", quote=FRESH.rstrip("."), acts=acts, grants=grants, names=names)) as server:
        r = run_with(pilot, server, ["gdisk", str(gpt_image)], FRESH)
    assert r.code == 0, r.stdout + r.stderr
    after = table(gpt_image)
    assert "keep-me" not in after and "Disk identifier" in after  # a fresh, empty GPT
    assert [g["acts"] for g in r.of("policy_granted")] == [["delete"], ["overwrite"]]
    sentence = repr(FRESH.rstrip("."))
    said = [a["granted"] for a in r.of("answer") if "granted" in a]
    assert said == [f"delete granted by the model's judgment (openai:gpt-4o-mini) that your words {sentence} cover 'all partitions'",
                    f"overwrite granted by the model's judgment (openai:gpt-4o-mini) that your words {sentence} cover 'EXISTING PARTITIONS'"]


@pytest.fixture
def msdos_image(tmp_path):
    image = tmp_path / "disk.img"
    with open(image, "wb") as fh:
        fh.truncate(16 << 20)
    subprocess.run(["parted", "-s", str(image), "mklabel", "msdos", "mkpart", "primary", "1MiB", "8MiB"], check=True, capture_output=True)
    return image


def label(image) -> str:
    out = subprocess.run(["parted", "-s", str(image), "print"], capture_output=True, text=True).stdout
    return next((line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith("Partition Table")), "")


@needs_parted
def test_parted_mklabel_under_a_prompt_that_forbids_it_keeps_the_label(pilot, msdos_image):
    with FakeLLM(answer=model([], "Yes")) as server:
        r = run_with(pilot, server, ["parted", str(msdos_image), "mklabel", "gpt"], NEVER_PARTITION)
    assert r.code == 3, r.stdout + r.stderr
    assert label(msdos_image) == "msdos"
    [denied] = r.of("policy_denied")
    assert (denied["reply"], denied["changed_from"]) == ("no", "Yes") and "destroyed" in denied["evidence"]


@needs_parted
def test_mirror_parted_mklabel_under_a_prompt_that_asks_for_it(pilot, msdos_image):
    grants = [("delete", "this image", FRESH.rstrip("."))]
    with FakeLLM(answer=model([], "Yes", quote=FRESH.rstrip("."), acts={"destroyed": "delete"}, grants=grants,
                              names={"destroyed": "existing disk label"})) as server:
        r = run_with(pilot, server, ["parted", str(msdos_image), "mklabel", "gpt"], FRESH)
    assert r.code == 0, r.stdout + r.stderr
    assert label(msdos_image) == "gpt" and r.of("policy_granted")[0]["judge"].startswith("openai:")


def cp_case(tmp_path):
    (tmp_path / "a.txt").write_text("new\n")
    (tmp_path / "b.txt").write_text("old\n")
    return ["cp", "-i", "a.txt", "b.txt"]


def test_cp_i_under_never_overwrite_is_refused_even_when_the_judge_quotes_the_copy_sentence(pilot, tmp_path):
    with FakeLLM(answer=model([], "y", quote="Copy a.txt to b.txt", acts={"overwrite": "overwrite"})) as server:
        r = run_with(pilot, server, cp_case(tmp_path), "Copy a.txt to b.txt. Never overwrite an existing file.")
    assert r.code == 3 and (tmp_path / "b.txt").read_text() == "old\n", r.stdout + r.stderr
    assert "Never overwrite an existing file" in r.of("policy_denied")[0]["why"]


def test_mirror_cp_i_under_replace_b_with_a_is_allowed(pilot, tmp_path):
    with FakeLLM(answer=model([], "y")) as server:
        r = run_with(pilot, server, cp_case(tmp_path), "Replace b.txt with a.txt.")
    assert r.code == 0 and (tmp_path / "b.txt").read_text() == "new\n", r.stdout + r.stderr
    assert r.of("answer")[0]["granted"] == "overwrite granted by your words 'Replace b.txt with a.txt'"


# -- the three mixed sentences: a negation about something else does not veto the grant ---------------------------------
MIXED = {
    "prune": ("Prune the old release branches, but don't push anything.", "mkdir -p br && touch br/r1 br/r2 br/r3 br/r4",
              'read -p "Delete 4 merged branches? [y/N] " a; [ "$a" = y ] && rm -r br', "br", "Prune the old release branches"),
    "wipe": ("Nothing of the old setup should survive: wipe the cache directory first.", "mkdir -p cache && touch cache/f",
             'read -p "Remove cache/ and its 80 files? [y/N] " a; [ "$a" = y ] && rm -r cache', "cache", ""),
    "drop": ("Drop the staging schema and don't let anyone else connect while you work.", "mkdir -p staging && touch staging/t",
             'read -p "Drop schema staging? [y/N] " a; [ "$a" = y ] && rm -r staging', "staging", ""),
}


@pytest.mark.parametrize("case", sorted(MIXED))
def test_a_granting_sentence_with_a_dont_about_something_else_grants(pilot, tmp_path, case):
    prompt, setup, ask, gone, quote = MIXED[case]
    grants = [("delete", "the old release branches", "Prune the old release branches")] if case == "prune" else []
    names = {"merged branches": "merged branches"} if case == "prune" else None  # "the old release branches": the judge points
    with FakeLLM(answer=model([], "y", quote=quote, acts={"": "delete"}, grants=grants, names=names)) as server:
        r = run_with(pilot, server, ["bash", "-c", f"{setup}; {ask}; echo done"], prompt)
    assert r.code == 0 and not (tmp_path / gone).exists(), r.stdout + r.stderr
    assert r.of("policy_denied") == [] and r.of("answer")[0]["granted"]


# -- other shapes of a yes, and prohibitions in other words ---------------------------------------------------------------
SHAPES = {
    "typed-name": ('echo "This will permanently delete the database prod-db and all its data."; '
                   'read -p "Type the database name to confirm: " a; [ "$a" = prod-db ] && rm -r db', "prod-db"),
    "plan": ('echo "  # null_resource.db will be destroyed"; echo "Plan: 0 to add, 0 to change, 1 to destroy."; echo; '
             'echo "Do you want to perform these actions?"; echo "  Only \'yes\' will be accepted to approve."; echo; '
             'read -p "  Enter a value: " a; [ "$a" = yes ] && rm -r db', "yes"),
    "box": ('printf "╭──────────────────────────╮\\n│ Bash command             │\\n│   rm -r db               │\\n│   Remove the db folder   │\\n'
            '╰──────────────────────────╯\\n"; echo "Do you want to proceed?"; PS3="> "; select a in "Yes" "Yes, and don\'t ask again" "No"; '
            'do break; done; [ "$a" = Yes ] && rm -r db', "1"),
    "removed-list": ('echo "The following packages will be REMOVED:"; echo "  db db-common"; '
                     'echo "0 upgraded, 0 newly installed, 2 to remove and 0 not upgraded."; '
                     'read -p "Do you want to continue? [Y/n] " a; [ "$a" != n ] && rm -r db', "y"),
}
FORBIDS = ["Never delete anything.", "The db folder is off limits.", "The db folder must be kept.", "Do not lose any data."]


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("forbid", FORBIDS)
def test_other_shapes_of_a_yes_under_a_prohibition_in_other_words(pilot, tmp_path, shape, forbid):
    body, yes = SHAPES[shape]
    (tmp_path / "db").mkdir()
    with FakeLLM(answer=model([], yes, quote="Tidy up the database", acts={"": "delete"})) as server:
        r = run_with(pilot, server, ["bash", "-c", body + "; echo finished"], f"Tidy up the database. {forbid}")
    assert r.code == 3 and (tmp_path / "db").is_dir(), r.stdout + r.stderr
    why = r.of("policy_denied")[0]["why"]  # forbidden where the block names the db folder; else nothing granted it
    assert forbid.rstrip(".") in why or "nothing you wrote asks to delete here" in why, why


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_mirror_other_shapes_of_a_yes_the_prompt_asks_for_go_through(pilot, tmp_path, shape):
    body, yes = SHAPES[shape]
    (tmp_path / "db").mkdir()
    prompt = "Get rid of the db folder for good. Keep the README."
    grants = [("delete", "the db folder", "Get rid of the db folder for good")]
    with FakeLLM(answer=model([], yes, quote="Get rid of the db folder for good", acts={"": "delete"}, grants=grants,
                              names={"prod-db": "prod-db"})) as server:
        r = run_with(pilot, server, ["bash", "-c", body + "; echo finished"], prompt)
    assert r.code == 0 and not (tmp_path / "db").exists(), r.stdout + r.stderr
    assert r.of("policy_granted") and r.of("policy_denied") == []


def test_a_catch_all_rule_never_grants_a_destructive_yes_in_any_shape(pilot, tmp_path):
    for shape, (body, yes) in SHAPES.items():
        (tmp_path / "db").mkdir(exist_ok=True)
        r = pilot(["bash", "-c", body + "; echo finished"], "--answer", f".={yes}")
        assert r.code == 3 and (tmp_path / "db").is_dir(), (shape, r.stdout + r.stderr)


def test_python_input_with_a_warning_above_is_a_program_of_the_same_class(pilot, tmp_path):
    """Python's input() under the same rule: the warning row above decides nothing by its position."""
    program = tmp_path / "wipe.py"
    program.write_text(textwrap.dedent("""
        import shutil
        print("This erases every file in data/.")
        if input("OK? [y/N] ") == "y":
            shutil.rmtree("data")
        print("finished")
    """))
    (tmp_path / "data").mkdir()
    with FakeLLM(answer=model([], "y")) as server:
        r = run_with(pilot, server, [sys.executable, str(program)], "Set things up. Nothing here may be deleted.")
    assert r.code == 3 and (tmp_path / "data").is_dir(), r.stdout + r.stderr


def test_every_grant_is_said_where_every_refusal_is_console_runs_show_and_the_report(tmp_path):
    """The console's answer line, `runs show`, and the report's HTML, JSON and Markdown say "granted by …"."""
    import os

    command = cp_case(tmp_path)
    log = tmp_path / "run"
    env = {**{k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}, "OPENAI_API_KEY": KEY}
    with FakeLLM(answer=model([], "y")) as server:
        proc = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--log", str(log), "--report", "--timeout", "40s",
                               "--provider", "openai", "--base-url", server.url + "/v1", "--prompt", "Replace b.txt with a.txt.",
                               "--", *command], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90, cwd=tmp_path, env=env)
    said = "overwrite granted by your words 'Replace b.txt with a.txt'"
    assert proc.returncode == 0 and said in proc.stdout and "granted by your words: 1" in proc.stdout, proc.stdout + proc.stderr
    shown = subprocess.run([sys.executable, "-m", "cursorpilot", "runs", "show", str(log)], capture_output=True, text=True, env=env)
    assert "overwrite 'b.txt'?\": your words 'Replace b.txt with a.txt'" in shown.stdout and "deny policy: granted:" in shown.stdout, shown.stdout
    assert said in (log / "report.md").read_text()
    assert said in (log / "report.html").read_text().replace("&#39;", "'")
    assert [row.get("granted") for row in json.loads((log / "report.json").read_text())["ledger"]] == [said]
