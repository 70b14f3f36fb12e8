"""How a secret is shown, told and named (cursorpilot/records/secret.py), and what the transcript and the redactor do with one."""

import hashlib
import json
import re
import subprocess
import sys

import pytest

from cursorpilot.clock import FakeClock
from cursorpilot.errors import BadInput
from cursorpilot.records.models import KeysSent, mask_secrets
from cursorpilot.records.redact import Redactor
from cursorpilot.records.secret import asks_secret, given, masked, names, resolve
from cursorpilot.records.transcript import Transcript


def test_a_mask_keeps_the_length_and_a_keyed_tag_and_is_never_masked_twice():
    mask = masked("hunter2")
    assert re.fullmatch(r"•••••• \(7 chars, hmac:[0-9a-f]{8}\)", mask)
    assert masked(masked("hunter2")) == mask and masked("hunter2") == mask != masked("hunter3")  # equal within a run


def test_a_mask_holds_no_unkeyed_digest_a_guess_could_be_checked_against():
    """The mask was `sha256:f52fbd32`: anyone with the transcript could test a guessed weak password offline."""
    mask = masked("hunter2")
    for digest in (hashlib.sha256(b"hunter2").hexdigest(), hashlib.sha1(b"hunter2").hexdigest(), hashlib.md5(b"hunter2").hexdigest()):
        assert digest[:8] not in mask
    other_run = subprocess.run([sys.executable, "-c", "from cursorpilot.records.secret import masked; print(masked('hunter2'))"],
                               capture_output=True, text=True, check=True).stdout.strip()
    assert other_run != mask and other_run.startswith("•••••• (7 chars, hmac:")  # a key per run (process), never written


def test_the_transcript_masks_a_secret_record_as_it_writes_text_and_hex_alike(tmp_path):
    tx = Transcript(tmp_path / "t.jsonl", "r", FakeClock(), Redactor(env={}))
    tx.write(KeysSent(keys="hunter2", data="hunter2", hex=b"hunter2".hex(), secret=True))
    tx.write(KeysSent(keys="<enter>", data="\r", hex="0d"))
    tx.close()
    first, enter = map(json.loads, (tmp_path / "t.jsonl").read_text().splitlines())
    assert first["keys"] == first["data"] == first["hex"] == masked("hunter2")
    assert (enter["keys"], enter["data"]) == ("<enter>", "\r")
    assert mask_secrets({"secret": True, "text": "<secret:db>"})["text"] == "<secret:db>"  # a name is no secret


@pytest.mark.parametrize("prompt", ["Password: ", "Enter passphrase (empty for no passphrase):", "[sudo] password for ada:",
                                    "API token: ", "PIN:", "Enter the 2FA code:"])
def test_prompts_that_ask_for_a_secret_by_their_words(prompt):
    assert asks_secret(prompt)


@pytest.mark.parametrize("prompt", ["Name: ", "Pinned version? ", "Tokenizer to use:", "Project name (my-app):"])
def test_prompts_that_do_not(prompt):
    assert not asks_secret(prompt)


def test_a_dialog_asks_for_a_secret_by_a_field_label_above_its_buttons():
    """pinentry-curses: the answer to its box was kept in clear, for its last rows are the buttons."""
    box = "x Please re-enter this passphrase x\nx Passphrase: ________ x\nx\nx   <OK>      <Cancel>   x\nmqqqqqqqj"
    assert asks_secret(box, dialog=True) and not asks_secret(box)
    assert not asks_secret("tokens used: 1234\nContinue the session?\n<Yes> <No>", dialog=True)


def test_a_reply_names_secrets_and_only_the_bytes_get_their_values():
    assert names("<secret:db><enter>") == ["db"] and names("db") == []
    assert resolve("<secret:db>", {"db": "s3cr3t"}) == "s3cr3t"
    with pytest.raises(KeyError):
        resolve("<secret:nope>", {"db": "s3cr3t"})


def test_secret_options_read_their_values_from_the_environment():
    assert given(["db=DB_PASSWORD"], {"DB_PASSWORD": "s3cr3t"}) == {"db": "s3cr3t"}
    for spec, env, said in [("db", {}, "expected NAME=ENVVAR"), ("db=X", {}, "X is not set"),
                            ("db=X", {"X": ""}, r"not set \(or empty\)")]:
        with pytest.raises(BadInput, match=said):
            given([spec], env)
    with pytest.raises(BadInput, match="given twice"):
        given(["db=X", "db=Y"], {"X": "1", "Y": "2"})


def test_a_given_secret_is_redacted_wherever_else_it_shows_up_from_four_characters():
    r = Redactor(env={}, secrets=["s3cr3t-value", "123"])
    assert r.text("db password is s3cr3t-value, pid 123") == "db password is [REDACTED], pid 123"
