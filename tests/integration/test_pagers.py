"""A pager at its prompt: less under git log, and more on a long file, real programs on real pseudo-terminals, with a
model (the real openai SDK against the local fake) and with rules. The prompt spells no keys (less shows ':'), so its
rule names them (generic.pager: q, <space>): the model's answer schema allows only those, the key is typed without
Enter, and the script after the pager goes on. Through a 0.5B model, less's ':' was a line to fill: a commit's subject
was typed into it as commands (s saved a log file), and the run ended at a person."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, question_of, typed

pytestmark = pytest.mark.timeout(180)

# after the pager, a line the script reads: an Enter sent after the pager's key would answer it empty at once
AFTER = "read -p 'Tag the release? [y/n] ' a; echo \"$a\" > out.txt"
GIT_LOG = ("git init -q . && git config user.email dev@example.com && git config user.name Dev && "
           "for i in $(seq 1 45); do git commit -q --allow-empty -m \"Fix issue #$i in the scheduler\"; done && "
           "git commit -q --allow-empty -m 'deploy.sh: ask \"Continue with the deploy? [y/N]\" before pushing' && "
           f"GIT_PAGER=less LESS=FRX git log && {AFTER}")
MORE = f"seq 1 300 > long.txt && more long.txt && {AFTER}"
PAGERS = {"less": GIT_LOG, "more": MORE}
RULES = """
- {id: pager, match: '(?m)^(:|\\(END\\)|--More--.*)\\s*$', reply: q}
- {id: tag, match: 'Tag the release', reply: y}
"""


def model(request_log: list[str]):
    def answer(prompt: str) -> str:
        q = question_of(prompt)
        request_log.append(q)
        return typed("y") if "Tag the release" in q else typed("q")  # submit: true, as a model says it; no Enter follows
    return answer


@pytest.mark.parametrize("pager", [pytest.param("less", marks=pytest.mark.skipif(shutil.which("less") is None, reason="needs less (Debian: less)")),
                                   pytest.param("more", marks=pytest.mark.skipif(shutil.which("more") is None, reason="needs more (util-linux)"))])
@pytest.mark.parametrize("answerer", ["rules", "model"])
def test_a_pager_is_quit_with_its_key_and_the_script_goes_on(pilot, tmp_path, pager, answerer):
    command = ["bash", "-c", PAGERS[pager]]
    if answerer == "rules":
        r = pilot(command, rules=RULES)
    else:
        asked: list[str] = []
        with FakeLLM(answer=model(asked)) as server:
            r = pilot(command, "--provider", "openai", "--base-url", server.url + "/v1", env={"OPENAI_API_KEY": KEY})
        at_pager = [json.dumps(q["json"].get("response_format") or {}) for q in server.requests if "Tag the release" not in
                    question_of(q["json"]["messages"][-1]["content"])]
        assert len(at_pager) == 1 and '"q"' in at_pager[0] and '"<space>"' in at_pager[0], at_pager  # its keys, as the schema's enum
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "y\n"  # no Enter after q: the script's next question was asked and answered
    pager_answer, tag = r.of("answer")
    assert pager_answer["reply"] == "q" and tag["reply"] == "y" and r.of("escalation") == []
    assert pager_answer["rule_id"] == "generic.pager"


def test_mirror_a_line_reader_that_prompts_with_a_colon_is_answered_with_a_line(pilot, tmp_path):
    """`read -p ':'` shows what less shows, but reads a line (canonical mode): the model's answer is typed whole, with
    Enter, not narrowed to a pager's q and space."""
    command = ["bash", "-c", "echo 'Name the release:'; read -p ':' name; echo \"$name\" > out.txt"]
    with FakeLLM(answer=lambda prompt: typed("quarterly 1.1")) as server:
        r = pilot(command, "--provider", "openai", "--base-url", server.url + "/v1", env={"OPENAI_API_KEY": KEY})
    (request,) = server.requests
    assert '"<space>"' not in json.dumps(request["json"].get("response_format") or {})
    assert r.code == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "quarterly 1.1\n"
    assert [a["rule_id"] for a in r.of("answer")] == ["generic.waiting_input"]


def test_mirror_a_yes_at_a_colon_that_reads_keys_under_a_warning_is_still_weighed(pilot, tmp_path):
    """The pager's rule changes how a ':' that reads keys is read (a question with keys, not a field): a forbidden act
    phrased right there is still refused. A model that says yes to everything (a server that keeps no schema) types no
    'y' under 'Never delete any partition' when the warning above the ':' says the key deletes them."""
    command = ["bash", "-c", "echo 'This deletes every partition on disk.img. Press y to go on.'; read -n1 -p ':' k; "
               "echo; echo \"$k\" > out.txt"]
    with FakeLLM(answer=lambda prompt: typed("y")) as server:
        r = pilot(command, "--provider", "openai", "--base-url", server.url + "/v1", "--prompt",
                  "Tidy the disk image. Never delete any partition.", env={"OPENAI_API_KEY": KEY}, timeout=90)
    assert not (tmp_path / "out.txt").exists() or (tmp_path / "out.txt").read_text().strip() != "y", r.stdout + r.stderr
    assert r.code == 3, r.stdout + r.stderr
    assert not [a for a in r.of("answer") if a["reply"] == "y"]
