"""Real programs under the compiled policy (issue 47, "Tests"): each asks before one act that destroys (the programs:
tests/policy_programs.py), under four governing prompts: a prohibition in plain words, one in other words ("I still
need notes.txt tomorrow", "Leave X alone"), a prohibition about something else beside a grant of this act, and the
grant in other words.

The model says yes to every question. Under a prohibition it is also a misled judge, quoting an unrelated sentence
of the prompt or the prohibition itself, and, once per prohibition, a compile that grants the act with the
prohibition's own words (validation drops it): the act is never done, checked on disk. The judge is asked at all only
where a grant of the act names something else and no prohibition's words name the question's object (`ASIDE`). Under
a grant, the model is honest (it compiles the grant and, as a judge, points at it and at the question's words for its
object): the act is done. Without a model, a catch-all rule's yes meets the lexical reader's compile. The compile is
answered by the fake as an honest model would, per prompt; nothing here uses the network. Cursor's approval box and
an agent-style box: tests/integration/test_policy_boxes.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLM
from tests.helpers import KEY, is_weigh, judged, policy
from tests.policy_programs import PROGRAMS, Program, model, transcript, wheel

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def six_venv(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(folder / "v")], check=True, capture_output=True)
    (folder / "v" / "six.whl.path").write_text(str(wheel(folder)))
    return folder / "v"


def run(pilot, request, tmp_path, name: str, prompt: str, compiled: str | None, judge: str = ""):
    """The program under the prompt, answered by the one fake model (compiled: its compile), or with no model at all
    (compiled None: a rule that says the program's yes to every question and names no act; the lexical reader compiles)."""
    program = PROGRAMS[name]
    if program.needs:
        pytest.skip(program.needs)
    venv = request.getfixturevalue("six_venv") if name == "pip-uninstall" else None
    command = program.setup(tmp_path, venv)
    if compiled is None:
        return pilot(command, "--answer", f".={program.yes}", "--prompt", prompt), program.done(tmp_path, venv), None
    with FakeLLM(answer=model(program.yes, compiled, judge)) as server:
        r = pilot(command, "--provider", "openai", "--base-url", server.url + "/v1", "--prompt", prompt, env={"OPENAI_API_KEY": KEY})
    return r, program.done(tmp_path, venv), server


# "Leave X alone", X as the question names it: a prohibition of every act that destroys.
LEAVE = {"pip-uninstall": "six", "git-reset-hard": "notes.txt", "git-checkout-p": "my edits", "git-branch-D": "the feature branch",
         "rm-i": "notes.txt", "cp-i": "b.txt", "mkfs-ext4": "disk.img", "cryptsetup-luksFormat": "disk.img",
         "container-prune": "the stopped containers", "apt-get-remove": "jq", "sqlite-drop-table": "the users table"}


def forbidding(program: Program, name: str, how: str) -> tuple[str, tuple[str, str, str]]:
    """The prompt that forbids the act (plain, in other words, "leave X alone"), and the prohibition as an honest model
    compiles it."""
    if how == "leave":
        words = f"Leave {LEAVE[name]} alone"
        return f"{program.task}. {words}.", ("any", LEAVE[name], words)
    words, obj = program.plain if how == "plain" else program.other
    return f"{program.task}. {words}.", (program.act, obj, words)


@pytest.mark.parametrize("judge", ["unrelated", "prohibition"])
@pytest.mark.parametrize("how", ["plain", "other", "leave"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_forbidden_act_is_not_done_by_a_yes_model_and_a_misled_judge(pilot, request, tmp_path, name, how, judge):
    """A model that says yes to everything, and as a judge quotes the prompt's unrelated task sentence or the
    prohibition itself (its act, and the question's words for the object): the act is not done, exit 3, said."""
    program = PROGRAMS[name]
    prompt, prohibition = forbidding(program, name, how)
    quote = program.task if judge == "unrelated" else prohibition[2]
    r, done, _ = run(pilot, request, tmp_path, name, prompt, policy([], [prohibition]),
                     judged("allow", quote, act=program.act, names=program.names))
    assert not done, transcript(r)
    assert r.code == 3 and r.of("policy_denied") and r.of("policy_granted") == [], transcript(r)


# A grant of the act for something else, and a prohibition whose words do not name what the question names: no
# prohibition bears by its words and no grant names the object, so the judge is asked; its quote decides nothing unless
# it is a grant's. (grant's words, its object, the prohibition's words, its object)
ASIDE = {
    "pip-uninstall": ("Uninstall the unused test tools", "the unused test tools",
                      "My scripts depend on the compatibility library", "the compatibility library"),
    "git-reset-hard": ("Reset the retry counter", "the retry counter", "What I typed this morning is the only copy", "what I typed this morning"),
    "git-checkout-p": ("Discard the debug prints in app.py", "the debug prints in app.py",
                       "The paragraph I added is the only copy", "the paragraph I added"),
    "git-branch-D": ("Delete the stale release tags", "the stale release tags",
                     "The experiment from last week is unmerged and I need it", "the experiment from last week"),
    "rm-i": ("Delete the build logs", "the build logs", "The meeting minutes I wrote are the only copy", "the meeting minutes I wrote"),
    "cp-i": ("Overwrite the cached config", "the cached config", "My draft is the only copy I have", "my draft"),
    "mkfs-ext4": ("Format the scratch partition image", "the scratch partition image",
                  "The photos from my holiday exist nowhere else", "the photos from my holiday"),
    "cryptsetup-luksFormat": ("Overwrite the swap image with random bytes", "the swap image",
                              "The archive on it exists nowhere else", "the archive"),
    "container-prune": ("Remove the dangling images", "the dangling images", "Yesterday's test runs hold results I still need",
                        "yesterday's test runs"),
    "apt-get-remove": ("Remove the old kernels", "the old kernels", "The JSON tool is needed by my build", "the JSON tool"),
    "sqlite-drop-table": ("Drop the temporary staging table", "the temporary staging table",
                          "The customer accounts are production data", "the customer accounts"),
}


@pytest.mark.parametrize("judge", ["unrelated", "prohibition"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_forbidden_act_the_judge_is_asked_about_is_not_done_whatever_it_quotes(pilot, request, tmp_path, name, judge):
    """The judge is asked (a grant of the act names something else), and quotes the prompt's unrelated task sentence or
    the prohibition, with the question's words for the object: neither is a grant that covers it; not done."""
    program = PROGRAMS[name]
    grant, grant_object, prohibition, prohibition_object = ASIDE[name]
    prompt = f"{program.task}. {grant}. {prohibition}."
    quote = program.task if judge == "unrelated" else prohibition
    r, done, server = run(pilot, request, tmp_path, name, prompt,
                          policy([(program.act, grant_object, grant)], [("any", prohibition_object, prohibition)]),
                          judged("allow", quote, act=program.act, names=program.names))
    assert not done, transcript(r)
    assert r.code == 3 and r.of("policy_denied") and r.of("policy_granted") == [], transcript(r)
    assert any(is_weigh(json.dumps(q["json"])) for q in server.requests), transcript(r)  # the judge was asked, and refused


@pytest.mark.parametrize("how", ["plain", "other", "leave"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_compile_that_grants_with_the_prohibitions_own_words_is_dropped(pilot, request, tmp_path, name, how):
    """The model compiles the prohibition into a grant of the act (its quote the forbidding sentence) and no
    prohibition, and judges with that quote: validation drops the grant, and the act is not done."""
    program = PROGRAMS[name]
    prompt, (act, obj, words) = forbidding(program, name, how)
    act = program.act if act == "any" else act  # a grant's act is one act
    r, done, _ = run(pilot, request, tmp_path, name, prompt, policy([(act, obj, words)], []),
                     judged("allow", words, act=act, names=program.names))
    assert not done, transcript(r)
    assert r.code == 3 and r.of("policy_granted") == [], transcript(r)
    [compiled] = r.of("policy_compiled")
    assert any("its words forbid it" in d for d in compiled["dropped"]), compiled


# Granted acts the product refuses today (reported to the lead; strict: the marker goes when the product is fixed).
PRODUCT_GAPS: dict[tuple[str, str], str] = {}  # none left: the lead fixed those this file found


JUDGED = {"pip-uninstall", "git-checkout-p", "cp-i", "mkfs-ext4", "cryptsetup-luksFormat", "apt-get-remove", "sqlite-drop-table"}


@pytest.mark.parametrize("case", ["beside", "granted"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_mirror_a_granted_act_goes_through_with_an_honest_model(pilot, request, tmp_path, name, case):
    """A prohibition about something else beside a grant of this act, and the grant in other words: the honest
    compile grants it, and where the grant names its object in other words the judge points at the grant and at the
    question's words for it. The act is done, exit 0, granted."""
    if (name, case) in PRODUCT_GAPS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=PRODUCT_GAPS[name, case]))
    program = PROGRAMS[name]
    prompt, grants, prohibitions = program.beside if case == "beside" else (*program.granted, [])
    act, _obj, quote = grants[0]
    r, done, _ = run(pilot, request, tmp_path, name, prompt, policy(grants, prohibitions),
                     judged("allow", quote, act=act, names=program.names))
    assert done and r.code == 0, transcript(r)
    assert r.of("policy_granted") and r.of("policy_denied") == [], transcript(r)
    if case == "granted" and name in JUDGED:  # the question does not name the grant's object in the grant's words
        assert r.of("policy_granted")[0]["judge"] == "openai:gpt-4o-mini", transcript(r)


# The lexical reader's gaps on "beside" prompts, once: a bare name (six, requests, main) was no object to it, so "Leave
# requests alone" forbade every act on anything and refused "Uninstall six".
LEXICAL_GAPS: dict[str, str] = {}  # none left: a bare name is that thing, "or not" no negation, "Format disk.img" a grant


@pytest.mark.parametrize("case", ["plain", "other", "leave", "beside"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_without_a_model_the_lexical_compile_decides_a_catch_all_rules_yes(pilot, request, tmp_path, name, case):
    """No model: a rule that says yes to every question names no act, so the prompt's words, as the lexical reader
    compiles them, decide: a prohibition (plain, other words, "leave X alone") refuses; "Uninstall six." beside a
    prohibition about something else grants."""
    program = PROGRAMS[name]
    if case == "beside" and name in LEXICAL_GAPS:
        request.applymarker(pytest.mark.xfail(strict=True, reason=LEXICAL_GAPS[name]))
    prompt = program.beside[0] if case == "beside" else forbidding(program, name, case)[0]
    r, done, _ = run(pilot, request, tmp_path, name, prompt, None)
    if case == "beside":
        assert done and r.code == 0 and r.of("policy_granted"), transcript(r)
    else:
        assert not done and r.code == 3 and r.of("policy_denied") and r.of("policy_granted") == [], transcript(r)


# -- neighbours: a grant beside a prohibition of a thing whose name begins the same way, and a step after a refused one --
NEIGHBOURS = {
    "prefix": ("mkdir -p photos photos-old && touch photos/a.jpg photos-old/b.jpg\n"
               'read -p "Delete folder photos-old/ and its 1 file? [y/N] " a\n[ "$a" = y ] && rm -r photos-old\n'
               'read -p "Delete folder photos/ and its 1 file? [y/N] " b\n[ "$b" = y ] && rm -r photos\necho "got:$a$b"',
               "Delete the photos-old folder. Keep photos/ as it is.",
               [("delete", "the photos-old folder", "Delete the photos-old folder")], [("any", "photos/", "Keep photos/ as it is")]),
    "steps": ("mkdir -p cache build && touch cache/c build/b\n"
              'echo "Step 1 of 2: clean the cache"\nread -p "Remove cache/ and its files? [y/N] " a\n[ "$a" = y ] && rm -r cache\n'
              'echo "Step 2 of 2: clean the build"\nread -p "Remove build/ and its files? [y/N] " b\n[ "$b" = y ] && rm -r build\n'
              'echo "got:$a$b"',
              "Remove build/ when asked. The cache/ folder must be kept.",
              [("delete", "build/", "Remove build/ when asked")], [("any", "cache/", "The cache/ folder must be kept")]),
}


@pytest.mark.parametrize("case", sorted(NEIGHBOURS))
@pytest.mark.parametrize("compiler", ["model", "lexical"])
def test_a_grant_beside_a_kept_neighbour_goes_through_and_the_neighbour_stays(pilot, tmp_path, case, compiler):
    """A file manager's delete of photos-old/ under "Keep photos/" (a name that begins the same way), and a step-by-step
    runner's yes to the step after a refused one (the refused question above is no warning of this one): each grant is
    done, each kept thing stays; a model that says yes to everything, or a catch-all rule."""
    body, prompt, grants, prohibitions = NEIGHBOURS[case]
    granted, kept = ("photos-old", "photos") if case == "prefix" else ("build", "cache")
    if compiler == "model":
        with FakeLLM(answer=model("y", policy(grants, prohibitions), judged("refuse"))) as server:
            r = pilot(["bash", "-c", body], "--provider", "openai", "--base-url", server.url + "/v1", "--prompt", prompt,
                      env={"OPENAI_API_KEY": KEY})
    else:
        r = pilot(["bash", "-c", body], "--answer", ".=y", "--prompt", prompt)
    assert not (tmp_path / granted).exists() and (tmp_path / kept).is_dir(), transcript(r)
    assert len(r.of("policy_granted")) == 1 and len(r.of("policy_denied")) == 1 and r.code == 3, transcript(r)
