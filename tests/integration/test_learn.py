"""`cursor-pilot learn`: a person answers a real program's questions once, at the pilot's own terminal; the rules
file it writes answers them with nobody there, and the program ends in the same state.

The person is this test at the other end of a real pseudo-terminal (pexpect on the outer cursor-pilot process): it
waits for the pilot to ask, reads what the program shows, and types its answer as a person would, a passphrase
included (read without echo, by getpass, on that terminal)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from tests.integration.test_cli_usage import cp

pytestmark = pytest.mark.timeout(300)
ROOT = Path(__file__).resolve().parents[2]
CREATE_VUE = ROOT / "tests" / "npm" / "node_modules" / ".bin" / "create-vue"
PASSPHRASE = "s3cret-pass-Qx9"


class Person:
    """Someone at the pilot's terminal: answers each question it is asked by what the program shows."""

    def __init__(self, args: list[str], cwd: Path):
        env = {k: v for k, v in os.environ.items() if k not in ("CI", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")}
        self.child = pexpect.spawn(sys.executable, ["-m", "cursorpilot", *args], cwd=str(cwd), env=env, encoding="utf-8",
                                   dimensions=(40, 140), timeout=90)
        self.asked: list[str] = []
        self.seen = ""

    def answer(self, replies: list[tuple[str, str]]) -> None:
        """(words the question shows, the reply), for each question in turn; a question not expected fails the test."""
        for needle, reply in replies:
            self.child.expect("cursor-pilot needs you")
            self.child.expect(r"Type the answer[^\n]*\n")
            shown = self.child.before
            self.asked.append(shown)
            assert needle in shown, f"expected a question about {needle!r}, the program shows:\n{shown}"
            self.child.expect("> ")
            self.child.sendline(reply)

    def finish(self) -> int:
        self.child.expect(pexpect.EOF, timeout=120)
        self.seen = self.child.before
        self.child.close()
        return self.child.exitstatus


def nobody(args: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """The same program run again with nobody at the terminal."""
    return cp("run", "--quiet", *args, cwd=cwd, env=env, timeout=120)


OPENSSL = ["openssl", "req", "-new", "-newkey", "rsa:2048", "-keyout", "key.pem", "-out", "req.csr"]
OPENSSL_ANSWERS = [("Enter PEM pass phrase", PASSPHRASE), ("Verifying - Enter PEM pass phrase", PASSPHRASE), ("Country Name", "DE"),
                   ("State or Province Name", "Berlin"), ("Locality Name", ""), ("Organization Name", "Acme Ltd"),
                   ("Organizational Unit Name", ""), ("Common Name", "shop.example"), ("Email Address", ""),
                   ("A challenge password", ""), ("An optional company name", "")]


def subject(folder: Path) -> str:
    return subprocess.run(["openssl", "req", "-in", str(folder / "req.csr"), "-noout", "-subject"], capture_output=True, text=True,
                          check=True).stdout.strip()


def opens(folder: Path, passphrase: str) -> bool:
    return subprocess.run(["openssl", "pkey", "-in", str(folder / "key.pem"), "-passin", f"pass:{passphrase}", "-noout"],
                          capture_output=True).returncode == 0


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")
def test_learn_openssl_req_then_the_rules_make_the_same_request_with_nobody_there(tmp_path):
    learned, again = tmp_path / "learned", tmp_path / "again"
    learned.mkdir(), again.mkdir()
    person = Person(["learn", "--out", str(tmp_path / "openssl.yaml"), "--log", "log", "--", *OPENSSL], learned)
    person.answer(OPENSSL_ANSWERS)
    assert person.finish() == 0, person.seen
    assert "learned 11 rule(s) from your 11 answer(s)" in person.seen
    rules = (tmp_path / "openssl.yaml").read_text()
    assert rules.count("<secret:pem_pass_phrase>") == 2 and "--secret pem_pass_phrase=ENVVAR" in rules
    for folder in (learned / "log", tmp_path):
        assert not [p for p in folder.rglob("*") if p.is_file() and PASSPHRASE.encode() in p.read_bytes()]
    assert subject(learned) == "subject=C = DE, ST = Berlin, O = Acme Ltd, CN = shop.example" and opens(learned, PASSPHRASE)

    r = nobody(["--log", "log", "--rules", str(tmp_path / "openssl.yaml"), "--secret", "pem_pass_phrase=PEM_PASS", "--", *OPENSSL],
               again, env={"PEM_PASS": PASSPHRASE})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "answers: 11 (11 by rules) · escalations: 0" in r.stdout
    assert subject(again) == subject(learned) and opens(again, PASSPHRASE) and not opens(again, "wrong")


@pytest.mark.skipif(not CREATE_VUE.exists(), reason="needs create-vue: npm ci --prefix tests/npm")
def test_learn_create_vue_then_the_rules_scaffold_the_same_project_with_nobody_there(tmp_path):
    learned, again = tmp_path / "learned", tmp_path / "again"
    learned.mkdir(), again.mkdir()
    person = Person(["learn", "--out", str(tmp_path / "vue.yaml"), "--log", "log", "--", str(CREATE_VUE)], learned)
    person.answer([("Project name", "shop"), ("Use TypeScript?", "n"),
                   ("Select features to include", "<down><space><down><space><enter>"),  # Router and Pinia, as a person picks them
                   ("Select experimental features", ""), ("Skip all example code", "")])
    assert person.finish() == 0, person.seen
    package = (learned / "shop" / "package.json").read_text()
    assert '"vue-router"' in package and '"pinia"' in package and "typescript" not in package

    r = nobody(["--log", "log", "--rules", str(tmp_path / "vue.yaml"), "--", str(CREATE_VUE)], again)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "answers: 5 (5 by rules) · escalations: 0" in r.stdout

    def tree(folder: Path) -> dict[str, bytes]:
        return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}

    assert tree(again / "shop") == tree(learned / "shop")


def test_after_a_person_answered_in_a_normal_run_their_answers_can_be_saved_as_rules(tmp_path):
    program = 'read -p "Release name: " n; read -p "Publish it? [y/n] " p; echo "released $n publish=$p" > done.txt'
    person = Person(["run", "--log", "log", "--", "bash", "-c", program], tmp_path)
    person.answer([("Release name", "v1.2"), ("Publish it?", "y")])
    person.child.expect(r"You answered 2 question\(s\) yourself\. Save your answers as rules in rules\.learned\.yaml\?")
    person.child.sendline("y")
    assert person.finish() == 0, person.seen
    assert (tmp_path / "done.txt").read_text() == "released v1.2 publish=y\n"
    (tmp_path / "done.txt").unlink()
    r = nobody(["--log", "log2", "--rules", "rules.learned.yaml", "--", "bash", "-c", program], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "done.txt").read_text() == "released v1.2 publish=y\n"


def test_learn_with_nobody_at_the_terminal_is_one_line_and_exit_2(tmp_path):
    p = cp("learn", "--", "bash", "-c", 'read -p "Name? " n', cwd=tmp_path)
    assert p.returncode == 2 and p.stderr.strip() == ("cursor-pilot: error: --learn needs you at the terminal to answer the "
                                                       "program's questions (stdin is not a terminal, or CI is set)")
    assert not (tmp_path / "rules.learned.yaml").exists()


def test_a_learn_run_counts_the_persons_answers_as_answers_not_escalations(tmp_path):
    """`cursor-pilot learn` said "needs a human: no rule matches this prompt" at every question and ended with
    "escalations: 7": the questions a learn run is for are not a failure of anything."""
    program = 'read -p "Release name: " n; read -p "Publish it? [y/n] " p; echo "released $n publish=$p"'
    person = Person(["learn", "--out", str(tmp_path / "r.yaml"), "--log", "log", "--", "bash", "-c", program], tmp_path)
    person.answer([("Release name", "v1.2"), ("Publish it?", "y")])
    assert person.finish() == 0, person.seen
    assert "answers: 2 (2 by you) · escalations: 0" in person.seen and "needs a human" not in person.seen, person.seen
    assert all(shown.startswith(" (--learn: your answer becomes a rule). The program shows:") for shown in person.asked)
    transcript = (tmp_path / "log" / "transcript.jsonl").read_text()
    assert '"type": "escalation"' not in transcript and transcript.count('"type": "human_asked"') == 2


PASSWD = r'''
import getpass, hashlib, sys
if getpass.getpass("Current password: ") != "old-Secret-1":
    sys.exit("passwd: Authentication token manipulation error")
new = getpass.getpass("New password: ")
if getpass.getpass("Retype new password: ") != new:
    sys.exit("Sorry, passwords do not match.")
open("shadow", "w").write(hashlib.sha256(new.encode()).hexdigest())
print("passwd: password updated successfully")
'''


def test_learned_passwd_rules_answer_each_prompt_by_its_own_rule(tmp_path):
    """`New\\s+password:` also answered "Retype new password:": the rule learned for the retype never fired."""
    learned, again = tmp_path / "learned", tmp_path / "again"
    learned.mkdir(), again.mkdir()
    (tmp_path / "passwd.py").write_text(PASSWD)
    command = [sys.executable, str(tmp_path / "passwd.py")]
    person = Person(["learn", "--out", str(tmp_path / "passwd.yaml"), "--log", "log", "--", *command], learned)
    person.answer([("Current password", "old-Secret-1"), ("New password", "new-Secret-2"), ("Retype new password", "new-Secret-2")])
    assert person.finish() == 0 and "learned 3 rule(s)" in person.seen, person.seen
    r = nobody(["--log", "log", "--rules", str(tmp_path / "passwd.yaml"), "--secret", "current_password=OLD", "--secret", "password=NEW",
                "--", *command], again, env={"OLD": "old-Secret-1", "NEW": "new-Secret-2"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert (again / "shadow").read_text() == (learned / "shadow").read_text()
    answers = [json.loads(line) for line in (again / "log" / "transcript.jsonl").read_text().splitlines() if '"type": "answer"' in line]
    assert [a["source"] for a in answers] == ["rules:learned1", "rules:learned2", "rules:learned3"]


def sectors(image: Path) -> list[tuple[int, int]]:
    """The image's partitions: (first sector, last sector) each, as sgdisk prints them."""
    out = subprocess.run(["sgdisk", "-p", str(image)], capture_output=True, text=True, check=True).stdout
    return [(int(m[1]), int(m[2])) for m in re.finditer(r"^\s+\d+\s+(\d+)\s+(\d+)\s", out, re.M)]


@pytest.mark.skipif(shutil.which("gdisk") is None or shutil.which("sgdisk") is None, reason="needs gdisk")
def test_learned_gdisk_rules_partition_a_disk_of_another_size(tmp_path):
    """gdisk's learned rules hard-coded one image's sector numbers (`First sector (34-20446, default = 2048)`): on an
    image of another size no rule matched."""
    learned, again = tmp_path / "learned", tmp_path / "again"
    learned.mkdir(), again.mkdir()
    os.truncate(_image(learned / "disk.img"), 10 << 20)
    os.truncate(_image(again / "disk.img"), 20 << 20)
    person = Person(["learn", "--out", str(tmp_path / "gdisk.yaml"), "--log", "log", "--", "gdisk", "disk.img"], learned)
    person.answer([("Command (? for help)", "n"), ("Partition number", ""), ("First sector", ""), ("Last sector", ""),
                   ("Hex code or GUID", ""), ("Command (? for help)", "w"), ("Do you want to proceed?", "Y")])
    assert person.finish() == 0, person.seen
    assert sectors(learned / "disk.img") == [(2048, 18431)]  # the whole 10 MiB disk, aligned
    assert "20446" not in (tmp_path / "gdisk.yaml").read_text()
    # a learned rule names no act: gdisk's write (THIS WILL OVERWRITE EXISTING PARTITIONS) needs your grant for it
    rules = (tmp_path / "gdisk.yaml").read_text()
    (tmp_path / "gdisk.yaml").write_text(rules.replace('reply: "Y"}', 'reply: "Y", grants: [overwrite]}', 1))
    r = nobody(["--log", "log", "--rules", str(tmp_path / "gdisk.yaml"), "--", "gdisk", "disk.img"], again)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "answers: 7 (7 by rules) · escalations: 0" in r.stdout
    assert sectors(again / "disk.img") == [(2048, 38911)]  # the whole 20 MiB disk: its own defaults, not the first one's


def _image(path: Path) -> Path:
    path.write_bytes(b"")
    return path
