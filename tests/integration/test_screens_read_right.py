"""Screens read for what they are, on real programs (issue 27): ncurses boxes (dialog), a checklist whose question wraps
(create-vue at 80, 120 and 200 columns), a bash `select` with its own PS3, an empty answer at a menu. Each with rules
and with a model (the real openai SDK to the local fake); real pseudo-terminals."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, question_of, typed

pytestmark = pytest.mark.timeout(180)
NPM = Path(__file__).resolve().parents[1] / "npm" / "node_modules"
CREATE_VUE = NPM / "create-vue" / "bundle.js"
needs_dialog = pytest.mark.skipif(shutil.which("dialog") is None, reason="needs dialog (Debian package dialog; .ci/run installs it)")
needs_vue = pytest.mark.skipif(not CREATE_VUE.exists(), reason="needs npm ci --prefix tests/npm (create-vue)")

BOARD = """
board=$(dialog --stdout --menu "Target board:" 14 60 5 rpi4 "Raspberry Pi 4 Model B" rpi5 "Raspberry Pi 5" \
  cm4 "Compute Module 4" pico "Raspberry Pi Pico") || exit 1
feats=$(dialog --stdout --separate-output --checklist "Firmware features:" 14 60 4 wifi "Wi-Fi driver" on \
  bt "Bluetooth stack" off usbboot "Boot from USB" off ota "Over-the-air updates" off) || exit 1
clear
printf 'board=%s\\n' "$board" > build.conf
printf 'feature=%s\\n' $feats >> build.conf
"""
WANTED = "board=cm4\nfeature=usbboot\nfeature=ota\n"


def keys(r) -> list[str]:
    return [k["keys"] for k in r.of("keys_sent")]


def model(answers: dict[str, str]):
    """A model that answers the question on screen from a table (the first key found in the question wins)."""
    def answer(prompt: str) -> str:
        question = question_of(prompt)
        for key, reply in answers.items():
            if key in question:
                return typed(reply, submit=not reply.endswith(">"))
        return json.dumps({"action": "human", "text": "no idea", "submit": False})
    return answer


@needs_dialog
@pytest.mark.parametrize("answerer", ["rules", "model"])
def test_a_dialog_menu_then_its_checklist_each_get_their_own_decision(pilot, tmp_path, answerer):
    """The checklist drawn after the menu was taken for the menu still there (the same border row, read as `x <`):
    Enter was pressed on it with no decision, its preset (wifi) accepted."""
    table = {"Target board": "cm4", "Firmware features": "usbboot, ota"}
    if answerer == "rules":
        r = pilot(["bash", "-c", BOARD], "--answer", "Target board=cm4", "--answer", "Firmware features=usbboot, ota")
    else:
        with FakeLLM(answer=model(table)) as server:
            r = pilot(["bash", "-c", BOARD], "--provider", "openai", "--base-url", server.url + "/v1", env={"OPENAI_API_KEY": KEY})
        assert len(server.requests) == 2
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "build.conf").read_text() == WANTED
    choices = r.of("menu_choice")
    assert [[o.split()[0] for o in c["options"]] for c in choices] == [["cm4"], ["usbboot", "ota"]]
    assert r.of("enter_retry") == [] and len(r.of("answer")) == 2  # every key belongs to one of the two decisions


@needs_dialog
def test_dialog_yesno_and_menu_answered_by_rules(pilot, tmp_path):
    body = ('dialog --stdout --defaultno --yesno "Encrypt the archives?" 7 60; echo "enc=$?" > out.txt; '
            'dialog --stdout --menu "Compression:" 12 50 3 gz gzip xz xz zst zstd >> out.txt')
    r = pilot(["bash", "-c", body], "--answer", "Encrypt the archives=Yes", "--answer", "Compression=zst")
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text().split() == ["enc=0", "zst"]
    assert [[o.split()[0] for o in c["options"]] for c in r.of("menu_choice")] == [["Yes"], ["zst"]]


VUE_RULES = [
    "Project name=proj", "Use TypeScript=y", "Select features to include=Router, Pinia",
    "Select experimental features=", "Skip all example code=n",
]
VUE_MODEL = {"Project name": "proj", "Use TypeScript": "y", "Select features to include": "Router, Pinia",
             "Select experimental features": "", "Skip all example code": "n"}


@needs_vue
@pytest.mark.parametrize("cols", [80, 120, 200])
@pytest.mark.parametrize("answerer", ["rules", "model"])
def test_create_vue_gets_the_features_asked_for_and_no_others(pilot, tmp_path, cols, answerer):
    """At 120 columns the checklist's question wraps onto a second row and it was read as a text field: `Router, Pinia`
    typed as keys, its `a` ticked all seven. At 200 it was not recognised, and a rule for `Project name` matched the
    answered `◇ Project name` higher up: the name was typed into two checklists."""
    command = ["node", str(CREATE_VUE)]
    if answerer == "rules":
        r = pilot(command, "--cols", str(cols), *[a for rule in VUE_RULES for a in ("--answer", rule)], timeout=120)
    else:
        with FakeLLM(answer=model(VUE_MODEL)) as server:
            r = pilot(command, "--cols", str(cols), "--provider", "openai", "--base-url", server.url + "/v1",
                      env={"OPENAI_API_KEY": KEY}, timeout=120)
        assert len(server.requests) == 5
    assert r.code == 0, r.stdout + r.stderr
    package = json.loads((tmp_path / "proj" / "package.json").read_text())
    deps = {*package.get("dependencies", {}), *package.get("devDependencies", {})}
    assert {"vue-router", "pinia", "typescript"} <= deps
    assert not deps & {"vitest", "eslint", "prettier", "@vitejs/plugin-vue-jsx", "@playwright/test", "cypress", "oxfmt"}, deps
    features = [c for c in r.of("menu_choice") if c["multi"]]
    assert [c["options"] for c in features] == [["Router (SPA development)", "Pinia (state management)"], []]


def test_bash_select_with_its_own_ps3_gets_the_number_of_the_option(pilot):
    """`PS3="fruit? "` (as most scripts write it) was not seen as a numbered menu: the label was typed."""
    body = 'PS3="fruit? "; select f in apple banana cherry; do echo "chose:$f"; break; done; [ -n "$f" ]'
    r = pilot(["bash", "-c", body], "--answer", "fruit\\?=banana")
    assert r.code == 0, r.stdout + r.stderr
    assert b"chose:banana" in (r.log / "session.raw").read_bytes() and keys(r) == ["2", "<enter>"]


@pytest.mark.skipif(not (NPM / "create-vite").exists(), reason="needs npm ci --prefix tests/npm (create-vite)")
@pytest.mark.parametrize("answerer", ["rules", "model"])
def test_an_empty_answer_at_a_menu_takes_its_highlighted_default(pilot, tmp_path, answerer):
    """"the reply '' names none of the options": a model that answered a clack select as our own system prompt says
    (an empty text takes the default) was refused and escalated."""
    command = ["node", str(NPM / "create-vite" / "index.js"), "app"]
    table = {"Select a framework": "", "Select a variant": "", "Use rolldown-vite": "n", "Install with npm and start": "n"}
    if answerer == "rules":
        r = pilot(command, *[a for k, v in table.items() for a in ("--answer", f"{k}={v}")], timeout=120)
    else:
        with FakeLLM(answer=model(table)) as server:
            r = pilot(command, "--provider", "openai", "--base-url", server.url + "/v1", env={"OPENAI_API_KEY": KEY}, timeout=120)
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "app" / "package.json").exists() and r.of("escalation") == []
    framework = next(c for c in r.of("menu_choice") if "framework" in (c.get("reply") or "") or c["keys"] == "<enter>")
    assert framework["keys"] == "<enter>" and framework["options"] == [framework["highlighted"]]


@pytest.mark.skipif(shutil.which("mc") is None, reason="needs mc (Debian package mc)")
def test_a_file_managers_confirm_box_is_the_question_not_the_listing_behind_it(pilot, tmp_path):
    """Midnight Commander's `Delete file "b.txt"?` box, drawn over its panels, went to the model with the listing
    behind it offered as the options and the title row as the highlighted one; its own [ Yes ] [ No ] were not listed."""
    work = tmp_path / "work"
    work.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (work / name).write_text(name)
    seen = []

    def answer(prompt: str) -> str:
        question = question_of(prompt)
        seen.append(prompt)
        if "Delete file" in question:
            return typed("Yes")
        if "really want to quit" in question:
            return typed("Yes")
        if "b.txt" in prompt.split("# Screen", 1)[1].split("# The question", 1)[0] and "Delete" not in question:
            return typed("<down><down><f8>", submit=False) if len(seen) == 1 else typed("<f10>", submit=False)
        return typed("<f10>", submit=False)

    with FakeLLM(answer=answer) as server:
        r = pilot(["mc", "-u", "--nosubshell", "--nocolor", str(work), str(work)], "--provider", "openai", "--base-url", server.url + "/v1",
                  "--prompt", "Delete b.txt with the file manager, then quit it.", env={"OPENAI_API_KEY": KEY}, timeout=120)
    assert r.code == 0, r.stdout + r.stderr
    assert sorted(p.name for p in work.glob("*.txt")) == ["a.txt", "c.txt"]
    box = next(r["json"] for r in server.requests if "Delete file" in question_of(str(r["json"]["messages"][-1]["content"])))
    assert "a.txt" not in question_of(box["messages"][-1]["content"])  # the box asks, not the listing behind it
    said = box["messages"][-1]["content"]
    assert re.search(r"Highlighted \(an empty text takes it\): (Yes|No)\n", said)  # its options are the box's, on the screen once
    [choice] = [c for c in r.of("menu_choice") if c["options"] == ["Yes"]][:1]
    assert choice["highlighted"] in ("Yes", "No")
