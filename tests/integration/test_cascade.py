"""A cascade of answerers (issue 50): the run's model first, each --escalate-to model only when the one before it can't
be taken. Two fake OpenAI-compatible servers on 127.0.0.1 (the small one gives token log-probabilities where it is told
how sure it is), the real openai SDK, real programs (bash `read`, Python `input()`) on real pseudo-terminals."""

import json

import pytest

from tests.fakes.llm_server import FakeLLM, Step
from tests.helpers import KEY, is_policy, is_weigh, judged, question_of, script, typed

pytestmark = pytest.mark.timeout(120)
DEPLOY = 'read -p "Deploy to staging? [y/n] " a; echo "got:$a"'


def cascade(small: FakeLLM, strong: FakeLLM, *more: str) -> tuple[str, ...]:
    return ("--provider", "openai", "--model", "small", "--base-url", small.url + "/v1",
            "--escalate-to", f"openai:strong@{strong.url}/v1", *more)


def told(server: FakeLLM) -> list[str]:
    """The user prompts a server was sent."""
    return [m["content"] for r in server.requests for m in r["json"]["messages"] if m["role"] == "user"]


def test_a_sure_small_model_answers_and_the_strong_one_is_never_asked(pilot, tmp_path):
    (tmp_path / "prices.yaml").write_text("strong: [2.5, 10.0]\n")  # the small (local) model has no price: it costs nothing
    with FakeLLM(answer=lambda p: typed("y"), sure=lambda p: 0.97) as small, FakeLLM(answer=lambda p: typed("n")) as strong:
        r = pilot(["bash", "-c", DEPLOY], *cascade(small, strong, "--report", "--prices", str(tmp_path / "prices.yaml")),
                  "--prompt", "Deploy it.", env={"OPENAI_API_KEY": KEY})
    assert r.code == 0, r.stdout + r.stderr
    assert b"got:y" in (r.log / "session.raw").read_bytes()
    assert [a["source"] for a in r.of("answer")] == ["openai:small"] and not strong.requests
    assert small.requests[0]["json"]["logprobs"] is True and small.requests[0]["json"]["top_logprobs"] == 20
    [reply] = r.of("provider_reply")
    [tier] = reply["cascade"]
    assert tier["source"] == "openai:small" and tier["kept"] and tier["margin"] == pytest.approx(0.94, abs=0.001)
    assert tier["why"].startswith("sure of it (least token margin 0.94")
    summary = json.loads((r.log / "report.json").read_text())["cascade"]
    assert (summary["local"], summary["local_share"], summary["cost_usd"]) == (1, 1.0, 0.0)
    assert summary["saved_usd"] == summary["cost_alone_usd"] == tier["usd_alone"] > 0  # what the strong model alone would have cost


def test_an_unsure_small_model_is_escalated_and_the_strong_one_told_why(pilot):
    with FakeLLM(answer=lambda p: typed("y"), sure=lambda p: 0.55) as small, FakeLLM(answer=lambda p: typed("n")) as strong:
        r = pilot(["bash", "-c", DEPLOY], *cascade(small, strong), "--prompt", "Do not deploy anything yet.",
                  env={"OPENAI_API_KEY": KEY})
    assert r.code == 0, r.stdout + r.stderr
    assert b"got:n" in (r.log / "session.raw").read_bytes()
    assert [a["source"] for a in r.of("answer")] == ["openai:strong"]
    assert len(small.requests) == 1 and len(strong.requests) == 1
    [note] = told(strong)
    assert "A smaller model (openai:small) answered 'y' here, and its answer was not taken: unsure: its least token margin 0.10" in note
    first, second = r.of("provider_reply")[0]["cascade"]
    assert (first["kept"], second["kept"], second["source"]) == (False, True, "openai:strong")
    assert "logprobs" not in strong.requests[0]["json"]  # the strongest's answer is the decision path's to check: no confidence asked


@pytest.mark.parametrize("program,said,why,wanted", [
    (DEPLOY, "maybe", "'maybe' is not one of the answers the question takes (y, n)", "y"),  # a word the question does not take
    ('read -p "package name: (work) " a; echo "got:$a"', "package name: (work)", "repeats the question", "demo-widget"),  # an echo
])
def test_a_sure_answer_outside_the_answer_space_is_escalated(pilot, program, said, why, wanted):
    """However sure it is: the 0.5B model typed npm init's question back at it, certain of it."""
    with (FakeLLM(answer=lambda p: typed(said), sure=lambda p: 0.99) as small,
          FakeLLM(answer=lambda p: typed(wanted)) as strong):
        r = pilot(["bash", "-c", program], *cascade(small, strong), "--prompt", "Deploy it. The package is demo-widget.",
                  env={"OPENAI_API_KEY": KEY})
    assert r.code == 0, r.stdout + r.stderr
    assert f"got:{wanted}".encode() in (r.log / "session.raw").read_bytes()
    first, second = r.of("provider_reply")[0]["cascade"]
    assert first["why"] == why and not first["kept"] and second["kept"]
    assert [a["source"] for a in r.of("answer")] == ["openai:strong"]


def test_a_mirror_a_small_models_answer_the_question_takes_is_kept(pilot):
    """The mirror of the above: y at [y/n], sure, is inside the space and kept (the check is not 'always escalate')."""
    with FakeLLM(answer=lambda p: typed("n"), sure=lambda p: 0.99) as small, FakeLLM(answer=lambda p: typed("y")) as strong:
        r = pilot(["bash", "-c", DEPLOY], *cascade(small, strong), "--prompt", "Do not deploy.", env={"OPENAI_API_KEY": KEY})
    assert r.code == 0 and b"got:n" in (r.log / "session.raw").read_bytes() and not strong.requests


DELETE_ASKED = """
mkdir -p important && touch important/a important/b
read -p "Delete all files in important/? [y/N] " a
if [ "$a" = y ]; then rm -rf important; fi
echo "got:$a"
"""


def test_the_judgment_of_a_destructive_yes_goes_to_the_strongest_model_only(pilot, tmp_path):
    """The small model is sure of its y, and is kept as the answerer; the guard's model request on that yes (the
    governing prompt's compile, kind policy; a judge only where a grant may cover it) is asked of the strong model
    alone, and nothing grants it: nothing is deleted. The small model would have allowed it."""
    def small_answers(prompt: str) -> str:
        return judged("allow", "Tidy up this folder", act="delete") if is_weigh(prompt) else typed("y")

    with (FakeLLM(answer=small_answers, sure=lambda p: 0.99) as small,
          FakeLLM(answer=lambda p: judged("refuse", why="nothing asks to delete") if is_weigh(p) else typed("n")) as strong):
        r = pilot(["bash", "-c", DELETE_ASKED], *cascade(small, strong), "--prompt", "Tidy up this folder.",
                  env={"OPENAI_API_KEY": KEY})
    assert (tmp_path / "important" / "a").exists(), r.stdout + r.stderr
    assert not any(is_weigh(json.dumps(q["json"])) for q in small.requests) and len(small.requests) == 1
    assert [is_policy(json.dumps(q["json"])) for q in strong.requests] == [True]
    assert "logprobs" not in strong.requests[0]["json"]


def test_without_logprobs_two_samples_that_agree_keep_the_answer_and_two_that_differ_escalate(pilot, tmp_path):
    """A server that gives no log-probabilities (sure=None): a second answer, sampled, stands in. Python's input()."""
    program = script(tmp_path, "ask", """
        name = input("Project name: ")
        go = input("Continue? [y/N] ")
        print(f"got:{name}:{go}")
    """)
    with (FakeLLM(answer=lambda p: typed("rocket") if "Project name" in question_of(p) else typed("y")) as small,
          FakeLLM(answer=lambda p: typed("n")) as strong):
        small.script = [Step(), Step(), Step(text=typed("y")), Step(text=typed("n"))]  # the name twice alike; y then n
        r = pilot(program, *cascade(small, strong, "--report"), "--prompt", "Call the project rocket; do not continue.",
                  env={"OPENAI_API_KEY": KEY})
    assert r.code == 0, r.stdout + r.stderr
    assert b"got:rocket:n" in (r.log / "session.raw").read_bytes()
    assert [a["source"] for a in r.of("answer")] == ["openai:small", "openai:strong"]
    temperatures = [q["json"]["temperature"] for q in small.requests]
    assert temperatures == [0, 0.8, 0, 0.8] and len(strong.requests) == 1
    name, go = (rec["cascade"] for rec in r.of("provider_reply"))
    assert name[0]["why"] == "sure of it (a second answer, sampled, agreed)"
    assert go[0]["why"] == "unsure: a second answer, sampled, said 'n'"
    report = json.loads((r.log / "report.json").read_text())
    assert report["cascade"]["questions"] == 2 and report["cascade"]["local"] == 1
    assert report["cascade"]["models"][0]["model"] == "openai:small"


@pytest.mark.parametrize("opts, said", [
    (("--provider", "rules", "--escalate-to", "openai:gpt-4o"), "--provider must name a model's provider"),
    (("--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "--escalate-to", "gpt-4o"), "give PROVIDER:MODEL"),
    (("--provider", "openai", "--base-url", "http://127.0.0.1:9/v1", "--escalate-to", "openai:gpt-4o"), "OPENAI_API_KEY"),
])
def test_a_cascade_that_cannot_be_made_is_one_line_and_exit_2(pilot, opts, said):
    r = pilot(["true"], *opts)  # (the last: a public strong model and no key)
    assert r.code == 2 and said in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr
