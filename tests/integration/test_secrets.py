"""Secrets typed into real programs (issue 22, 2): the program gets them byte for byte; nothing the run leaves (the
transcript, session.cast and .raw, prompts/, the manifest, the report) nor its console holds them in clear.

Each run here goes through the real CLI without --quiet (its console is what a CI log shows) and with --report, and the
whole run folder is searched for the secret afterwards."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import checked
from tests.fakes.llm_server import FakeLLM

pytestmark = pytest.mark.timeout(120)
KEY = "sk-test-0123456789abcdefghij"
MASK_OF_14 = r"•••••• \(14 chars, hmac:[0-9a-f]{8}\)"
SECRET = "hunter2-Qx9"  # what the programs are given; never to be found in clear


@dataclass
class Run:
    code: int
    out: str  # stdout and stderr
    log: Path

    def of(self, type_: str) -> list[dict]:
        rows = checked([json.loads(line) for line in (self.log / "transcript.jsonl").read_text().splitlines()])
        return [r for r in rows if r["type"] == type_]

    def leaks(self, secret: str = SECRET) -> list[str]:
        """Every file of the run's folder, and its console, that holds the secret in clear."""
        found = [str(p.relative_to(self.log)) for p in self.log.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
        return found + (["console"] if secret in self.out else [])


@pytest.fixture
def drive(tmp_path):
    n = {"runs": 0}

    def run(command: list[str], *opts: str, env: dict | None = None) -> Run:
        n["runs"] += 1
        log = tmp_path / f"run{n['runs']}"
        base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        proc = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--log", str(log), "--report", "--timeout", "40s", *opts,
                               "--", *command], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90, cwd=tmp_path,
                              env={**base, **(env or {})})
        return Run(proc.returncode, proc.stdout + proc.stderr, log)

    return run


def script(tmp_path, name: str, body: str) -> str:
    path = tmp_path / name  # outside the run's folder, like the rules: what checks the secret is the test's own
    path.write_text(body)
    return str(path)


def rules(tmp_path, text: str) -> str:
    path = tmp_path / "rules.yaml"  # outside the run's folder: a rules file with a password in it is the user's own
    path.write_text(text)
    return str(path)


def test_read_s_answer_is_masked_everywhere_and_typed_byte_for_byte(drive, tmp_path):
    """bash `read -s`: the answer was printed on the console (`answer 'hunter2'`), stored in the transcript's answer and
    keys_sent records (text and hex) and in session.cast's input events."""
    check = script(tmp_path, "check.sh", f'read -s -p "Password: " pw; echo; [ "$pw" = {SECRET!r} ] && echo MATCH-$((${{#pw}}))')
    r = drive(["bash", check], "--rules", rules(tmp_path, f"- {{id: pw, match: 'Password', reply: '{SECRET}'}}\n"))
    assert r.code == 0, r.out
    assert b"MATCH-11" in (r.log / "session.raw").read_bytes()
    assert r.leaks() == []
    mask = r.of("answer")[0]["reply"]
    assert f"answer {mask}" in r.out and re.fullmatch(r"•••••• \(11 chars, hmac:[0-9a-f]{8}\)", mask)
    answer = r.of("answer")[0]
    assert (answer["reply"], answer["secret"]) == (mask, True)
    sent = [k for k in r.of("keys_sent") if k.get("secret")]
    assert [(k["keys"], k["data"], k["hex"]) for k in sent] == [(mask, mask, mask)]
    inputs = [json.loads(line)[2] for line in (r.log / "session.cast").read_text().splitlines()[1:] if json.loads(line)[1] == "i"]
    assert inputs == [mask, "\r"]
    assert "•••••• (11 chars" in (r.log / "report.md").read_text()


def test_getpass_answered_by_a_model_with_a_named_secret_from_the_environment(drive, tmp_path):
    """The model is told the secret's name, never its value; its history of earlier answers holds the mask."""
    program = tmp_path / "login.py"
    program.write_text(textwrap.dedent("""
        import getpass
        pw = getpass.getpass("Passphrase: ")
        name = input("Your name: ")
        print("OK" if pw == "%s" else "WRONG", name)
    """ % SECRET))

    def model(prompt: str) -> str:
        text = "<secret:vault>" if "Passphrase" in prompt.split("# The question", 1)[1] else "Ada"
        return json.dumps({"action": "type", "text": text, "submit": True})

    with FakeLLM(answer=model) as server:
        r = drive([sys.executable, str(program)], "--secret", "vault=VAULT_PASS", "--provider", "openai", "--base-url", server.url + "/v1",
                  env={"OPENAI_API_KEY": KEY, "VAULT_PASS": SECRET})
    assert r.code == 0, r.out
    assert b"OK Ada" in (r.log / "session.raw").read_bytes()
    assert r.leaks() == []
    bodies = [b.decode() for b in server.bodies]
    assert all(SECRET not in b for b in bodies)
    assert "<secret:vault>" in bodies[0] and "is hidden" in bodies[0]  # told the name, and that it is a hidden prompt
    # the passphrase's question is still on the screen: its answer is not said again as history (and never its value)
    assert "Passphrase" in bodies[1] and "# Earlier questions" not in bodies[1]
    assert json.loads((r.log / "manifest.json").read_text())["options"]["secret"] == ["vault=VAULT_PASS"]


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")
def test_ssh_keygen_passphrase_twice_from_a_named_secret(drive, tmp_path):
    r = drive(["ssh-keygen", "-q", "-t", "ed25519", "-C", "pilot", "-f", str(tmp_path / "key")], "--secret", "pp=PASSPHRASE",
              "--answer", "passphrase=<secret:pp>", env={"PASSPHRASE": SECRET})
    assert r.code == 0, r.out
    assert len(r.of("answer")) == 2 and all(a["secret"] for a in r.of("answer"))
    assert r.leaks() == []
    opened = subprocess.run(["ssh-keygen", "-y", "-P", SECRET, "-f", str(tmp_path / "key")], capture_output=True, text=True)
    assert opened.returncode == 0 and opened.stdout.startswith("ssh-ed25519 ")  # the key is locked with exactly that passphrase
    assert subprocess.run(["ssh-keygen", "-y", "-P", "wrong", "-f", str(tmp_path / "key")], capture_output=True).returncode != 0


def test_a_raw_mode_field_that_draws_stars_is_told_by_its_words(drive, tmp_path):
    """A TUI that reads raw keys and draws `*` leaves echo on: termios can't tell; "API token:" can."""
    program = tmp_path / "tui.py"
    program.write_text(textwrap.dedent("""
        import sys, termios, tty
        fd = sys.stdin.fileno()
        old = termios.tcgetattr(fd)
        tty.setraw(fd)
        sys.stdout.write("API token: "); sys.stdout.flush()
        got = ""
        while True:
            ch = sys.stdin.read(1)
            if ch in "\\r\\n":
                break
            got += ch
            sys.stdout.write("*"); sys.stdout.flush()
        termios.tcsetattr(fd, termios.TCSADRAIN, old)
        print("\\r\\nOK" if got == "%s" else "\\r\\nWRONG")
    """ % SECRET))
    r = drive([sys.executable, str(program)], "--answer", f"token={SECRET}")
    assert r.code == 0, r.out
    assert b"OK" in (r.log / "session.raw").read_bytes() and r.leaks() == []


def test_a_rule_may_say_its_reply_is_a_secret(drive, tmp_path):
    check = script(tmp_path, "licence.sh", 'read -p "Licence key for the build: " k; [ "$k" = "ABCD-1234-EFGH" ] && echo GOOD')
    r = drive(["bash", check], "--quiet", "--rules", rules(tmp_path, "- {match: 'Licence', reply: 'ABCD-1234-EFGH', secret: true}\n"))
    assert r.code == 0, r.out
    assert b"GOOD" in (r.log / "session.raw").read_bytes()
    # echo is on, so the program shows what is typed: session.raw keeps its bytes as printed; the cast and the report's
    # replay of it (what people share) redact the echo, as everything cursor-pilot writes of its own
    assert set(r.leaks("ABCD-1234-EFGH")) == {"session.raw"}
    answer, typed = r.of("answer")[0], next(k for k in r.of("keys_sent") if k.get("secret"))
    assert answer["secret"] is True and answer["reply"] == typed["data"] and re.fullmatch(MASK_OF_14, answer["reply"])


@pytest.mark.parametrize("given", ["rules", "answer", "plan"])
def test_a_rule_typing_a_secret_no_option_gives_is_refused_before_the_program_starts(tmp_path, given):
    """A rules file that uses <secret:password> without --secret password=… started the program, let it work up to the
    question, and stopped there (exit 3)."""
    program = ["bash", "-c", 'touch started; read -s -p "Password: " pw']
    rule = "- {id: pw, match: 'Password', reply: '<secret:password>'}\n"
    if given == "plan":
        (tmp_path / "plan.yaml").write_text(f"name: p\nsteps:\n  - name: login\n    drive: {json.dumps(program)}\n"
                                            "    answers:\n" + textwrap.indent(rule, "      "))
        args = ["--plan", "plan.yaml"]
    else:
        args = [*(["--rules", rules(tmp_path, rule)] if given == "rules" else ["--answer", "Password=<secret:password>"]), "--", *program]
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    p = subprocess.run([sys.executable, "-m", "cursorpilot", "run", "--log", "log", *args], stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=60, cwd=tmp_path, env=base)
    assert p.returncode == 2 and p.stdout == "" and p.stderr.count("\n") == 1, p.stdout + p.stderr
    assert "types <secret:password>, which no --secret gives: add --secret password=ENVVAR" in p.stderr
    assert not (tmp_path / "started").exists() and not (tmp_path / "log").exists()


def test_mirror_a_model_reply_naming_a_secret_that_was_not_given_escalates_and_types_nothing(drive):
    with FakeLLM(answer=lambda prompt: '{"action": "type", "text": "<secret:nope>", "submit": true}') as server:
        r = drive(["bash", "-c", 'read -s -p "Password: " pw'], "--provider", "openai", "--base-url", server.url + "/v1",
                  env={"OPENAI_API_KEY": KEY})
    assert r.code == 3, r.out
    assert r.of("keys_sent") == [] and "--secret nope=ENVVAR" in r.of("escalation")[0]["why"]


@pytest.mark.parametrize("spec,env,said", [
    ("vault", {}, "expected NAME=ENVVAR"),
    ("vault=NOT_SET_ANYWHERE", {}, "NOT_SET_ANYWHERE is not set"),
    ("vault=EMPTY", {"EMPTY": ""}, "EMPTY is not set (or empty)"),
    ("9x=VAR", {"VAR": "v"}, "expected NAME=ENVVAR"),
])
def test_a_bad_secret_option_is_one_line_and_exit_2_before_anything_runs(drive, tmp_path, spec, env, said):
    r = drive(["bash", "-c", "touch started"], "--secret", spec, "--answer", "x=y", env=env)
    assert r.code == 2 and said in r.out and len(r.out.strip().splitlines()) == 1, r.out
    assert not (tmp_path / "started").exists()


def test_echo_off_alone_makes_a_secret_whatever_the_prompt_says(drive, tmp_path):
    """No password word in sight: the terminal's echo being off is what tells."""
    check = script(tmp_path, "quiet.sh", f'read -s -p "Say something: " w; echo; [ "$w" = {SECRET!r} ] && echo SAME')
    r = drive(["bash", check], "--rules", rules(tmp_path, f"- {{match: 'Say something', reply: '{SECRET}'}}\n"))
    assert r.code == 0, r.out
    assert b"SAME" in (r.log / "session.raw").read_bytes() and r.leaks() == []
    assert r.of("answer")[0]["secret"] is True


@pytest.mark.skipif(not (shutil.which("gpg") and shutil.which("pinentry-curses")), reason="needs gpg and pinentry-curses")
def test_pinentry_curses_box_answered_by_a_literal_rule_is_masked(drive, tmp_path):
    """pinentry-curses draws a box in raw mode (echo off means nothing there) with its buttons under the field: the
    answer was kept in clear. Its field's label ("Passphrase:") tells."""
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    (home / "gpg-agent.conf").write_text(f"pinentry-program {shutil.which('pinentry-curses')}\n")
    (tmp_path / "plan.txt").write_text("the plan\n")
    r = drive(["bash", "-c", "export GPG_TTY=$(tty); gpg --symmetric plan.txt"], "--quiet",
              "--rules", rules(tmp_path, f"- {{match: 'passphrase', reply: '{SECRET}'}}\n"), env={"GNUPGHOME": str(home)})
    assert r.code == 0, r.out
    assert len(r.of("answer")) == 2 and all(a["secret"] for a in r.of("answer")) and r.leaks() == []
    env = {**os.environ, "GNUPGHOME": str(home)}
    try:
        opened = subprocess.run(["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", SECRET, "-d", str(tmp_path / "plan.txt.gpg")],
                                capture_output=True, text=True, env=env)
    finally:  # the agent this decryption started (the run's own was ended with the run)
        subprocess.run(["gpgconf", "--kill", "gpg-agent"], env=env, capture_output=True)
    assert opened.stdout == "the plan\n"


def test_a_secret_printed_by_the_program_and_a_no_echo_answer_reach_nothing_the_run_leaves(drive, tmp_path):
    """Issue 32: with `--secret tok=…` and a script printing `Using token $t for upload`, report.html's replay showed the
    token; masks carried an unsalted sha256 prefix a guessed password could be checked against. Here neither the
    --secret value nor the no-echo answer is in report.html/json/md, the cast, the transcript, the prompts, the model's
    requests or the console; only session.raw holds what the program printed, as printed. And redaction keeps the
    structure: the question after the password keeps its words, the model's prompt keeps its closing fence."""
    token, password = "MYTOK-7f3k9QzP", SECRET
    program = script(tmp_path, "upload.sh", textwrap.dedent("""\
        t="$UPLOAD_TOKEN"
        echo "Using token $t for upload"
        read -s -p "Password: " pw
        echo
        read -p "Remember me? [y/N] " r
        echo "debug: $pw"
        echo "done $r"
    """))

    def model(prompt: str) -> str:
        return json.dumps({"action": "type", "text": "n", "submit": True})

    with FakeLLM(answer=model) as server:
        r = drive(["bash", program], "--secret", "tok=UPLOAD_TOKEN", "--provider", "openai", "--base-url", server.url + "/v1",
                  "--rules", rules(tmp_path, f"- {{id: pw, match: 'Password:', reply: '{password}'}}\n"),
                  env={"OPENAI_API_KEY": KEY, "UPLOAD_TOKEN": token})
    assert r.code == 0, r.out
    raw = (r.log / "session.raw").read_bytes()
    assert f"Using token {token} for upload".encode() in raw and f"debug: {password}".encode() in raw and b"done n" in raw
    for value in (token, password):
        assert r.leaks(value) == ["session.raw"], value
        assert all(value not in b.decode() for b in server.bodies)
        for digest in (hashlib.sha256(value.encode()).hexdigest()[:8], hashlib.sha256(value.encode()).hexdigest()[:16]):
            found = [str(p) for p in r.log.rglob("*") if p.is_file() and digest.encode() in p.read_bytes()]
            assert found == [] and digest not in r.out, (value, found)
    for name in ("report.html", "report.json", "report.md", "session.cast", "transcript.jsonl"):
        assert (r.log / name).is_file(), name
    assert "Using token [REDACTED] for upload" in (r.log / "session.cast").read_text()
    assert "Using token [REDACTED] for upload" in (r.log / "report.html").read_text()
    assert re.search(r"•••••• \(11 chars, hmac:[0-9a-f]{8}\)", (r.log / "report.html").read_text())
    prompts = [p.read_text() for p in (r.log / "prompts").rglob("*prompt.md")]
    assert prompts and all("Remember me? [y/N]" in p for p in prompts)
    user = json.loads(server.bodies[0])["messages"][1]["content"]
    fenced = re.search(r"```TERMINAL\n(.*?)\n```", user, re.S)
    assert fenced and "Remember me? [y/N]" in fenced.group(1) and "Using token [REDACTED] for upload" in fenced.group(1)
    assert "Remember me? [y/N]" in r.out
