"""One real program per class of the behaviour matrix (tests/integration/test_matrix.py): a /dev/tty reader (ssh-keygen,
getpass), a threaded reader, a full-screen editor opened by another program, a REPL with a blank screen (bc), newt
dialogs (whiptail), and a prompt_toolkit input with a pre-filled default. Each gets its answer, byte for byte."""

import shutil
import subprocess

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, question_of, script, typed

pytestmark = pytest.mark.timeout(120)


def model_opts(server) -> tuple[str, ...]:
    return ("--provider", "openai", "--base-url", server.url + "/v1")


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen (openssh-client)")
def test_ssh_keygen_reads_its_passphrase_from_dev_tty_and_gets_it(pilot, tmp_path):
    """ssh-keygen with a rule for 'Enter passphrase' sat 10 minutes: its /dev/tty reads looked busy to the kernel check."""
    r = pilot(["ssh-keygen", "-t", "ed25519", "-f", str(tmp_path / "key"), "-C", "pilot"],
              rules="- {id: pass, match: 'passphrase', reply: 'correct horse'}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert len(r.of("answer")) == 2  # the passphrase, and the same again
    check = subprocess.run(["ssh-keygen", "-y", "-P", "correct horse", "-f", str(tmp_path / "key")], capture_output=True)
    assert check.returncode == 0, check.stderr  # the key opens with that passphrase: it arrived byte for byte


def test_getpass_reads_from_dev_tty_with_echo_off(pilot, tmp_path):
    program = script(tmp_path, "gp", """
        import getpass
        secret = getpass.getpass("Database password: ")
        open("got", "w").write(secret)
    """)
    r = pilot(program, rules="- {match: 'Database password', reply: 's3cret value'}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "got").read_text() == "s3cret value"


def test_a_reader_thread_while_the_main_thread_joins(pilot, tmp_path):
    """The kernel check looked at the main thread only (blocked in a join): busy forever."""
    program = script(tmp_path, "threaded", """
        import threading
        got = []
        t = threading.Thread(target=lambda: got.append(input("Worker needs a name: ")))
        t.start(); t.join()
        open("got", "w").write(got[0])
    """)
    r = pilot(program, rules="- {match: 'needs a name', reply: Ada}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "got").read_text() == "Ada"
    answered = r.of("answer")[0]["mono"] - r.of("program_started")[0]["mono"]
    assert answered < 3.0  # the kernel says it reads: no judging deadline needed


@pytest.mark.skipif(shutil.which("vim") is None or shutil.which("git") is None, reason="needs vim and git")
def test_an_editor_opened_by_git_commit_is_judged_whole_and_its_keys_reach_it(pilot, tmp_path):
    """vim on an empty commit message, cursor on an empty row: 0 model calls in 60 s (the judged region was empty)."""
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "a.txt").write_text("a\n")
    subprocess.run(["git", "add", "a.txt"], cwd=tmp_path, check=True)
    questions = []

    def model(prompt):
        q = question_of(prompt)
        questions.append(q)
        if "COMMIT_EDITMSG" in prompt or "Please enter the commit message" in prompt:
            return typed("<key:i>Add the a file<esc>:wq<enter>", submit=False)
        return typed("? unexpected screen")

    env = {"OPENAI_API_KEY": KEY, "GIT_EDITOR": "vim -u NONE -N", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    with FakeLLM(answer=model) as server:
        r = pilot(["git", "commit"], *model_opts(server), "--prompt", "Commit with the message 'Add the a file'.", env=env)
    assert r.code == 0, r.stdout + r.stderr
    log = subprocess.run(["git", "log", "--format=%s"], cwd=tmp_path, capture_output=True, text=True).stdout.strip()
    assert log == "Add the a file" and len(questions) == 1 and questions[0].strip()


@pytest.mark.skipif(shutil.which("bc") is None, reason="needs bc")
def test_bc_with_a_blank_screen_is_judged_and_answered_by_a_model(pilot, tmp_path):
    """bc -q shows nothing at all and reads: it was never escalated nor asked about."""
    seen = []

    def model(prompt):
        seen.append(prompt)
        screen = prompt.split("# Screen", 1)[1].split("# The question")[0]
        return typed("quit") if "42" in screen else typed("6*7")

    with FakeLLM(answer=model) as server:
        r = pilot(["bc", "-q"], *model_opts(server), "--prompt", "Compute 6*7 with bc, then quit.", env={"OPENAI_API_KEY": KEY})
    assert r.code == 0, r.stdout + r.stderr
    assert [a["reply"] for a in r.of("answer")] == ["6*7", "quit"] and len(seen) == 2
    assert b"42" in (r.log / "session.raw").read_bytes()


@pytest.mark.skipif(shutil.which("bc") is None, reason="needs bc")
def test_bc_with_rules_only_is_escalated_not_left_silent(pilot):
    r = pilot(["bc", "-q"], rules="- {match: 'nothing on this screen', reply: x}\n")
    assert r.code == 3, r.stdout + r.stderr
    assert r.of("escalation")[0]["mono"] - r.of("program_started")[0]["mono"] < 3.0


@pytest.mark.skipif(shutil.which("whiptail") is None, reason="needs whiptail (Debian: whiptail)")
def test_a_whiptail_menu_polling_its_terminal_is_answered_by_label(pilot, tmp_path):
    """A newt menu: the chosen item on another colour than the dialog, keys read by a poll loop (judged after 3 s)."""
    r = pilot(["bash", "-c", "whiptail --title Setup --menu 'Choose a database:' 15 50 3 pg PostgreSQL my MySQL lite SQLite "
               "2> choice"], rules="- {match: 'database', reply: MySQL}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "choice").read_text() == "my"
    [choice] = r.of("menu_choice")
    assert choice["keys"] == "<down><enter>" and choice["highlighted"].startswith("pg")
    assert r.of("answer")[0]["mono"] - r.of("program_started")[0]["mono"] < 2.5


@pytest.mark.skipif(shutil.which("whiptail") is None, reason="needs whiptail (Debian: whiptail)")
@pytest.mark.parametrize("reply, code", [("no", 1), ("yes", 0), ("n", 1)])
def test_a_whiptail_yes_no_dialog_gets_the_button_named(pilot, reply, code):
    """'no' was typed as n-o-Enter: newt ignores letters, and Enter pressed the focused <Yes>."""
    r = pilot(["bash", "-c", "whiptail --yesno 'Keep the existing settings?' 8 50; echo \"rc=$?\" > rc"],
              rules=f"- {{match: 'Keep the existing', reply: '{reply}'}}\n")
    assert r.code == 0, r.stdout + r.stderr
    assert (r.log.parent / "rc").read_text().strip() == f"rc={code}"


def test_a_prompt_toolkit_default_is_presented_as_the_default_and_replaced(pilot, tmp_path):
    """The model got the pre-filled default as the question; its answer was appended to the default (my-appshop)."""
    program = script(tmp_path, "ptk", """
        from prompt_toolkit import prompt
        first = prompt("Project name: ", default="my-app")
        second = prompt("Licence: ", default="MIT")
        open("got", "w").write(first + "|" + second)
    """)
    questions = []

    def model(prompt):
        questions.append(prompt)
        return typed("shop") if "Project name" in question_of(prompt) else typed("")

    with FakeLLM(answer=model) as server:
        r = pilot(program, *model_opts(server), "--prompt", "Call the project shop; keep the default licence.",
                  env={"OPENAI_API_KEY": KEY})
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "got").read_text() == "shop|MIT"
    assert "already holds 'my-app'" in questions[0] and "Project name" in question_of(questions[0])
