"""A model never makes up what is typed at a prompt that hides it (issue 48, decide/hidden.py). With a model that says
yes to everything, `y` became a new password while `--secret kp` was offered, and `YES` became a LUKS passphrase: a value
nobody chose, locked into the program. Real programs (a passwd-style getpass program, cryptsetup luksFormat on an image
file), the real openai SDK against the local fake: nothing is typed at the hidden prompt unless the user gave a secret,
the run ends at a person (exit 3, nobody there) saying so in one line, recorded in its escalation. The mirror: a model
that answers `<secret:kp>` with --secret kp=ENVVAR gets the secret typed, and it is nowhere in what the run leaves."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, is_weigh, judged, question_of, script, typed

pytestmark = pytest.mark.timeout(180)
SECRET = "kp-Zq81-volume"  # what --secret kp gives; never to be found in clear
PASSWD = """
    import getpass, sys
    print("Changing password for dev.")
    first = getpass.getpass("New password: ")
    second = getpass.getpass("Retype new password: ")
    if first != second:
        print("Sorry, passwords do not match."); sys.exit(1)
    open("out.txt", "w").write(first)
    print("passwd: password updated successfully")
"""
FORMAT = "Format img as a new LUKS volume, overwriting it."


def yes_to_everything(secret_reply: str | None = None):
    """A model that says yes to every question (and allows every yes it is asked to weigh); at a hidden prompt, what
    `secret_reply` says, else yes as well."""
    def answer(prompt: str) -> str:
        if is_weigh(prompt):
            return judged("allow", FORMAT, act="overwrite")
        if secret_reply is not None and "Typed here is hidden" in prompt:
            return typed(secret_reply)
        return typed("YES" if "capital letters" in question_of(prompt) else "y")
    return answer


def _model(pilot, command, *opts, answer, env=None):
    with FakeLLM(answer=answer) as server:
        r = pilot(command, "--provider", "openai", "--base-url", server.url + "/v1", *opts,
                  env={"OPENAI_API_KEY": KEY, **(env or {})}, timeout=120)
    return r, server


def test_trap_a_yes_model_types_no_made_up_new_password(pilot, tmp_path):
    r, _ = _model(pilot, script(tmp_path, "passwd", PASSWD), "--secret", "kp=KP_VALUE", answer=yes_to_everything(),
                  env={"KP_VALUE": SECRET})
    assert r.code == 3, r.stdout + r.stderr
    assert not (tmp_path / "out.txt").exists()
    assert [k for k in r.of("keys_sent") if k.get("secret")] == []  # nothing typed at the hidden prompt
    (escalation,) = r.of("escalation")
    assert escalation["prompt"].strip() == "New password:"
    assert "model's own value refused at a hidden prompt" in escalation["why"] and "--secret" in escalation["why"]
    assert "hidden prompt" in (r.stdout + r.stderr).splitlines()[0]  # said in one line


def test_mirror_a_model_naming_the_given_secret_types_it_twice_and_it_is_kept_nowhere(pilot, tmp_path):
    r, server = _model(pilot, script(tmp_path, "passwd", PASSWD), "--secret", "kp=KP_VALUE",
                       answer=yes_to_everything("<secret:kp>"), env={"KP_VALUE": SECRET})
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == SECRET
    assert r.of("escalation") == [] and len(r.of("answer")) == 2
    left = [str(p) for p in r.log.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert left == [] and SECRET not in r.stdout + r.stderr
    assert all(SECRET.encode() not in body for body in server.bodies)


def _luks(tmp_path) -> None:
    if shutil.which("cryptsetup") is None:
        pytest.skip("needs cryptsetup (Debian: cryptsetup-bin)")
    if os.geteuid() != 0:
        pytest.skip("cryptsetup luksFormat on an image file needs root here")
    with open(tmp_path / "img", "wb") as f:
        f.truncate(16 * 1024 * 1024)


LUKS = ["cryptsetup", "luksFormat", "--type", "luks2", "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "img"]


def _is_luks(tmp_path) -> bool:
    return subprocess.run(["cryptsetup", "isLuks", str(tmp_path / "img")], capture_output=True).returncode == 0


def test_trap_a_yes_model_types_no_made_up_luks_passphrase(pilot, tmp_path):
    _luks(tmp_path)
    r, _ = _model(pilot, LUKS, "--prompt", FORMAT, answer=yes_to_everything())
    assert r.code == 3, r.stdout + r.stderr
    assert not _is_luks(tmp_path)  # no volume locked with a passphrase nobody knows
    assert [a["reply"] for a in r.of("answer")] == ["YES"]  # the confirmation is the model's to give; the passphrase is not
    (escalation,) = r.of("escalation")
    assert "passphrase" in escalation["prompt"].lower() and "hidden prompt" in escalation["why"]


def test_mirror_luks_passphrase_from_the_given_secret(pilot, tmp_path):
    _luks(tmp_path)
    r, server = _model(pilot, LUKS, "--prompt", FORMAT, "--secret", "kp=KP_VALUE", answer=yes_to_everything("<secret:kp>"),
                       env={"KP_VALUE": SECRET})
    assert r.code == 0, r.stdout + r.stderr
    assert _is_luks(tmp_path) and r.of("escalation") == []
    opened = subprocess.run(["cryptsetup", "open", "--test-passphrase", "--key-file", "-", str(tmp_path / "img")],
                            input=SECRET.encode(), capture_output=True)
    assert opened.returncode == 0, opened.stderr  # locked with exactly the secret given
    left = [str(p) for p in r.log.rglob("*") if p.is_file() and SECRET.encode() in p.read_bytes()]
    assert left == [] and SECRET not in r.stdout + r.stderr
    assert all(SECRET.encode() not in body for body in server.bodies)


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen (Debian: openssh-client)")
def test_mirror_an_empty_answer_goes_where_the_prompt_offers_one_and_nowhere_else(pilot, tmp_path):
    """ssh-keygen names 'no passphrase' as an answer ('(empty for no passphrase)', still above its second prompt): a
    model's empty answer is no made-up value there. At passwd's 'New password:' it is a choice a person makes."""
    keygen = ["ssh-keygen", "-q", "-t", "ed25519", "-C", "pilot", "-f", str(tmp_path / "key")]
    r, _ = _model(pilot, keygen, answer=lambda prompt: typed(""))
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "key").exists() and len(r.of("answer")) == 2 and r.of("escalation") == []
    r, _ = _model(pilot, script(tmp_path, "passwd", PASSWD), answer=lambda prompt: typed(""))
    assert r.code == 3 and not (tmp_path / "out.txt").exists(), r.stdout + r.stderr
    assert "empty answer refused at a hidden prompt" in r.of("escalation")[0]["why"]
