"""A small local model answers right (issue 43): a prompt whose stable part is a prefix a server can cache, the default a
question shows offered as an answer, the governing prompt's sentences that bear on a question next to it, an echo of the
question's own words never typed, a rambling reply's first line taken when the rest is commentary, and the cached
tokens each provider reports counted.

The decision path with a scripted provider; the real SDKs against the fake server (which reports cached tokens as
each API does) for the providers; a real program end to end in tests/integration/test_small_model_e2e.py."""

from __future__ import annotations

import json

import pytest

from cursorpilot.clock import FakeClock
from cursorpilot.decide.bearing import bearing, question_line, shown_default
from cursorpilot.decide.context import PromptParts, build
from cursorpilot.decide.decider import Decider
from cursorpilot.decide.echo import echoed
from cursorpilot.decide.prompt_files import PromptFiler
from cursorpilot.decide.question import Choice, Kind, Question, Verdict
from cursorpilot.providers.anthropic import AnthropicProvider
from cursorpilot.providers.base import AnswerRequest, ProviderConfig, Reply, Usage
from cursorpilot.providers.llm import clean_reply, cost
from cursorpilot.providers.openai import OpenAIProvider
from cursorpilot.records.redact import Redactor
from cursorpilot.run_context import RunContext
from cursorpilot.records.transcript import Transcript
from tests.fakes.llm_server import FakeLLM, Step

COOKIE = ("Generate a project from the template. The project is called Rocket Lab; keep whatever slug the\n"
          "template suggests. Pick the BSD-3-Clause license, and say yes to Docker support (answer y).\n")
SPHINX = ("Set up Sphinx documentation here. Keep source and build directories separate. The project is\ncalled Pilot Docs, "
          "written by Eval Bot, release 1.4, and the documentation language is French\n(language code fr).\n")
VITE = ("Scaffold a new Vite project called pilot-app: React with plain JavaScript (no TypeScript, no React\n"
        "Compiler), ESLint as the linter. Do not install dependencies and do not start a dev server.\n")


def line(text: str, kind: str = Kind.INPUT, live: tuple[str, ...] = (), **kw) -> Question:
    return Question(kind=kind, text=text, key=text, source="generic.test", live=live or (text,), **kw)


class Scripted:
    """A model provider that answers from a list, recording what it was asked."""

    name = "openai"
    needs_prompt = True

    def __init__(self, *texts: str | None, reasons: tuple[str, ...] = ()):
        self.texts, self.reasons, self.asked = list(texts), list(reasons), []

    def answer(self, request: AnswerRequest) -> Reply:
        self.asked.append(request)
        text = self.texts.pop(0)
        reason = self.reasons.pop(0) if text is None and self.reasons else ""
        return Reply(text=text, source="openai:small", raw="raw", reason=reason, usage=Usage(100, 5, 0.5, None, 1, 60))


def decider(tmp_path, provider, governing: str = COOKIE) -> Decider:
    clock, redactor = FakeClock(), Redactor(env={})
    run = RunContext(tx=Transcript(tmp_path / "t.jsonl", "r", clock, redactor), redactor=redactor, clock=clock, log_dir=tmp_path,
                     run_id="r", provider=provider, allow=frozenset(), no_upload=True)
    return Decider(run, governing, None, None, PromptFiler(run, 1, "1/1: cookiecutter", None, governing))


def ask(d: Decider, q: Question):
    reply = d.call(d.request(q))
    decision = d.after(q, reply)
    if decision.verdict == Verdict.ANSWER:
        d.delivered(q.text, decision.text or "")
    return reply, decision


def records(tmp_path, type_: str) -> list[dict]:
    return [r for r in map(json.loads, (tmp_path / "t.jsonl").read_text().splitlines()) if r["type"] == type_]


SCREEN = ["  [1/4] project_name (My Project): Rocket Lab", "  [2/4] project_slug (rocket_lab): rocket_lab",
          "  [3/4] Select license", "    1 - MIT", "    2 - BSD-3-Clause", "    3 - GPL-3.0", "    Choose from [1/2/3] (1): 2"]
LICENCE = line("  [3/4] Select license\n    1 - MIT\n    2 - BSD-3-Clause\n    3 - GPL-3.0\n    Choose from [1/2/3] (1):",
               kind=Kind.MENU, live=tuple(SCREEN[:6]) + ("    Choose from [1/2/3] (1):",),
               choices=(Choice("1", "MIT", number=1), Choice("2", "BSD-3-Clause", number=2), Choice("3", "GPL-3.0", number=3)))


# -- the stable prefix -------------------------------------------------------------------------------------------------
def test_the_stable_prefix_is_byte_identical_across_a_runs_questions(tmp_path):
    """Instructions, governing prompt and step are the system prompt, the same bytes at every question (a line, a
    menu, a yes/no, a screen no rule knows, and the second asking after an echo), so a server's prefix cache keeps it
    for the run: only the user prompt, the screen and the question, is new each time."""
    model = Scripted("Rocket Lab", "project_slug", "rocket_lab", "BSD-3-Clause", "y", "WAIT")
    d = decider(tmp_path, model)
    ask(d, line("  [1/4] project_name (My Project):", live=("  [1/4] project_name (My Project):",)))
    ask(d, line("  [2/4] project_slug (rocket_lab):", live=(SCREEN[0], "  [2/4] project_slug (rocket_lab):")))
    ask(d, LICENCE)
    ask(d, line("  [4/4] use_docker (n):", kind=Kind.QUESTION, live=(*SCREEN, "  [4/4] use_docker (n):")))
    ask(d, line("Working…", kind=Kind.UNDECIDED, live=(*SCREEN, "Working…"), may_wait=True))
    assert len(model.asked) == 6  # the echo asked again
    systems = {r.system for r in model.asked}
    assert len(systems) == 1 and COOKIE.strip() in next(iter(systems))
    assert all(COOKIE.strip() not in r.user for r in model.asked[:1])  # said once per call, in the prefix
    users = [r.user for r in model.asked]
    assert len(set(users)) == len(users)


def test_the_question_is_said_last_and_the_screen_once(tmp_path):
    """The question block used to repeat the screen's tail (and a menu's options twice more); now the screen is said
    once and the question by its one line that asks, after it."""
    b = build(PromptParts(governing_prompt=COOKIE, step="1/1", kind=Kind.MENU, rule_id="r", question=LICENCE.text,
                          live=list(LICENCE.live), earlier=[], environment="", history=(), options=LICENCE.describe_choices(),
                          labels=("MIT", "BSD-3-Clause", "GPL-3.0"), accepts=("MIT", "BSD-3-Clause", "GPL-3.0")))
    assert b.user.count("BSD-3-Clause") == 2  # the screen, and the governing prompt's sentence next to the question
    assert b.user.index("# Screen") < b.user.index("# The question") < b.user.index("Select license\n```")
    assert "Options (→" not in b.user  # the screen shows them all


def test_mirror_options_the_screen_does_not_show_are_listed(tmp_path):
    """An ACP request's options, or a menu's that scrolled: the model has only the list."""
    q = Question(kind=Kind.PERMISSION, text="Run `rm -rf build`?", key="k", source="acp", live=("tool call: rm -rf build",),
                 choices=(Choice("a", "Allow once", kind="allow_once"), Choice("r", "Reject", kind="reject_once")))
    b = build(PromptParts(governing_prompt="g", step="1", kind=q.kind, rule_id="r", question=q.text, live=list(q.live),
                          earlier=[], environment="", history=(), options=q.describe_choices(), labels=("Allow once", "Reject")))
    assert "Options (→ marks the highlighted one)" in b.user and "Allow once [allow_once]" in b.user


# -- the answer space the screen shows -----------------------------------------------------------------------------
@pytest.mark.parametrize("asked,default", [
    ("  [2/4] project_slug (rocket_lab):", "rocket_lab"),
    ("> Project release []:", ""),
    ("> Project language [en]:", "en"),
    ("Enter file in which to save the key (/root/.ssh/id_ed25519): ", "/root/.ssh/id_ed25519"),
    ("version: (1.0.0) ", "1.0.0"),
])
def test_a_default_shown_in_brackets_is_offered_as_the_empty_answer(asked, default):
    assert shown_default(asked) == default
    b = build(PromptParts(governing_prompt="g", step="1", kind=Kind.INPUT, rule_id="r", question=asked, live=[asked],
                          earlier=[], environment="", history=()))
    said = f"Default: `{default}` (an empty text takes it)." if default else "Default: empty."
    assert said in b.user and b.user.index("# The question") < b.user.index(said)


@pytest.mark.parametrize("asked", ["Continue? [y/N] ", "Choose from [1/2/3]:", "> Author name(s): ", "package name: ", "sqlite> "])
def test_mirror_keys_in_brackets_or_a_word_with_brackets_are_no_default(asked):
    assert shown_default(asked) is None


@pytest.mark.parametrize("governing,asked,labels,said", [
    (COOKIE, "  [2/4] project_slug (rocket_lab):", (), ("keep whatever slug the template suggests",)),
    (COOKIE, "  [4/4] use_docker (n):", (), ("and say yes to Docker support (answer y)",)),
    (COOKIE, "  [3/4] Select license", ("MIT", "BSD-3-Clause", "GPL-3.0"), ("Pick the BSD-3-Clause license",)),
    (SPHINX, "> Project release []:", (), ("release 1.4",)),
    (SPHINX, "> Project language [en]:", (), ("the documentation language is French (language code fr)",)),
    (VITE, "◆  Install with npm and start now?", (), ("Do not install dependencies and do not start a dev server",)),
    (VITE, "◆  Which linter to use?", (), ("ESLint as the linter",)),
])
def test_the_governing_prompts_sentences_that_bear_on_the_question_are_placed_next_to_it(governing, asked, labels, said):
    assert bearing(governing, asked, labels) == said
    b = build(PromptParts(governing_prompt=governing, step="1", kind=Kind.INPUT, rule_id="r", question=asked, live=[asked],
                          earlier=[], environment="", history=(), labels=labels))
    tail = b.user[b.user.index("# The question"):]
    assert all(f"The governing prompt says: {s}." in tail for s in said)


@pytest.mark.parametrize("governing,asked", [
    ("Answer yes to everything.", "Install now? [y/N]"),  # one sentence: it is right above already
    (SPHINX, "> Author name(s):"),  # no sentence names an author: nothing said twice
    (COOKIE, "sqlite> "),
])
def test_mirror_no_sentence_is_repeated_that_does_not_bear_on_the_question(governing, asked):
    assert bearing(governing, asked) == ()


def test_the_line_that_asks_is_found_under_a_clack_question_and_above_a_menus_options():
    assert question_line("◆  Install with npm and start now?\n│  ● Yes / ○ No\n└") == "◆  Install with npm and start now?"
    assert question_line(LICENCE.text, ("MIT", "BSD-3-Clause", "GPL-3.0")) == "  [3/4] Select license"
    # the Cursor CLI's approval: its options end with the key they take, and one of them asks too
    assert question_line("Run this command?\nAdd Shell(npm) to allowlist? (tab)") == "Run this command?"
    assert question_line("Release checklist:\nIs the changelog up to date?\nDeploy now? [y/N]") == "Deploy now? [y/N]"


# -- an echo is never typed ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("reply,question", [
    ("use_docker (n)", "  [4/4] use_docker (n):"),  # cookiecutter, as a 0.5B model answered it
    ("project_slug", "  [2/4] project_slug (rocket_lab):"),
    ("(rocket_lab)", "  [2/4] project_slug (rocket_lab):"),
    ("Project release", "> Project release []:"),
])
def test_a_reply_of_the_questions_own_words_is_an_echo(reply, question):
    assert echoed(reply, question) is not None


@pytest.mark.parametrize("reply,question", [
    ("rocket_lab", "  [2/4] project_slug (rocket_lab):"),  # its default, typed: an answer
    ("DELETE", "Type DELETE to confirm:"),  # the word it asks for is not its opening
    ("y", "  [4/4] use_docker (n):"),
    ("Rocket Lab", "  [1/4] project_name (My Project):"),
])
def test_mirror_an_answer_that_shares_the_questions_words_is_no_echo(reply, question):
    assert echoed(reply, question) is None


def test_an_echo_of_the_questions_words_is_asked_again_and_never_typed(tmp_path):
    model = Scripted("use_docker (n)", "y")
    d = decider(tmp_path, model)
    q = line("  [4/4] use_docker (n):", live=(*SCREEN, "  [4/4] use_docker (n):"))
    reply, decision = ask(d, q)
    assert (decision.verdict, decision.text) == (Verdict.ANSWER, "y")
    assert "(not 'use_docker (n)': that repeats the question's own words)" in model.asked[1].user
    assert [a.answer for a in d.history] == ["y"]


def test_an_echo_of_the_questions_words_twice_goes_to_a_person(tmp_path):
    model = Scripted("use_docker (n)", "use_docker")
    _, decision = ask(decider(tmp_path, model), line("  [4/4] use_docker (n):"))
    assert decision.verdict == Verdict.ESCALATE and "after it was asked again" in decision.why


# -- a model that rambles ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("raw,text", [
    ("0.2.0\nThis sets the version to 0.2.0.", "0.2.0"),
    ("fr\n(language code for French)", "fr"),
    ("1.4\n\nThe governing prompt says release 1.4.", "1.4"),
    ('{"action": "type", "text": "module\\nThe module type is module.", "submit": true, "question": ""}', "module"),
])
def test_a_two_line_reply_with_commentary_takes_its_first_line_and_keeps_the_rest(raw, text):
    cleaned = clean_reply(raw)
    assert cleaned.text == text and any(r.startswith("commentary after the answer:") for r in cleaned.removed)


@pytest.mark.parametrize("raw", [
    "demo-widget\n0.2.0\nWidget demo for pilot eval",  # npm init's eleven values at its first question
    "CREATE TABLE fruit (name TEXT, qty INTEGER);\nINSERT INTO fruit VALUES ('apple', 3);",  # two statements
    "apple|3\nbanana|5",  # rows of data
    "Sure, here is the answer:\nfr",  # a lead-in: the answer is not the first line
    '{"action": "type", "text": "0.2.0\\n1.0.0", "submit": true, "question": ""}',
])
def test_a_reply_that_is_several_answers_is_still_refused(raw):
    cleaned = clean_reply(raw)
    assert cleaned.text is None and cleaned.reason.startswith("multi-line reply refused")


def test_mirror_several_lines_where_several_are_taken_stay_whole():
    assert clean_reply("line one\nThis is line two.", multiline_ok=True).text == "line one\nThis is line two."


def test_a_rambling_reply_is_typed_by_its_first_line_and_its_commentary_recorded(tmp_path):
    with FakeLLM(answer=lambda p: json.dumps({"action": "type", "text": "0.2.0\nThis sets the version.", "submit": True})) as server:
        provider = OpenAIProvider(ProviderConfig(base_url=server.url + "/v1", retries=0, timeout=5), "sk-test-0123456789abcdef")
        d = decider(tmp_path, provider)
        _, decision = ask(d, line("version: (1.0.0) "))
    assert (decision.verdict, decision.text) == (Verdict.ANSWER, "0.2.0") and len(server.requests) == 1
    [rec] = records(tmp_path, "provider_reply")
    assert rec["text"] == "0.2.0" and rec["removed"] == ["commentary after the answer: 'This sets the version.'"]


# -- cached tokens, counted ----------------------------------------------------------------------------------------
REQ = AnswerRequest(governing_prompt="g", kind="question", rule_id="r", prompt_block="Continue? [y/n]", screen="",
                    system="the stable prefix", user="Continue? [y/n]")


def openai(server) -> OpenAIProvider:
    return OpenAIProvider(ProviderConfig(base_url=server.url + "/v1", retries=0, timeout=5, model="gpt-4o-mini"), "sk-test-0123456789abcdef")


def test_openai_cached_prompt_tokens_are_recorded_and_priced_as_cached():
    with FakeLLM(answer=lambda p: "y") as server:
        server.script = [Step(usage={"prompt_tokens": 1000, "prompt_tokens_details": {"cached_tokens": 768}})]
        reply = openai(server).answer(REQ)
    assert (reply.usage.input_tokens, reply.usage.cached_tokens) == (1000, 768)
    assert reply.usage.cost_usd == cost("gpt-4o-mini", 1000, 3, None, 768) < cost("gpt-4o-mini", 1000, 3, None)
    assert reply.usage.record()["cached"] == 768


def test_llama_servers_prompt_cache_is_read_from_its_timings():
    """llama.cpp's llama-server says how many prompt tokens it took from its cache in `timings.cache_n`."""
    with FakeLLM(answer=lambda p: "y") as server:
        server.script = [Step(usage={"prompt_tokens": 420}, extra={"timings": {"cache_n": 300, "prompt_n": 120}})]
        reply = openai(server).answer(REQ)
    assert (reply.usage.input_tokens, reply.usage.cached_tokens) == (420, 300)


def test_anthropic_cache_reads_are_recorded_and_the_stable_prefix_is_marked_for_the_cache():
    with FakeLLM(answer=lambda p: "y") as server:
        server.script = [Step(usage={"input_tokens": 40, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 0})]
        cfg = ProviderConfig(base_url=server.url, retries=0, timeout=5, model="claude-haiku-4-5")
        reply = AnthropicProvider(cfg, "sk-ant-test-key-1234").answer(REQ)
    assert (reply.usage.input_tokens, reply.usage.cached_tokens) == (940, 900)  # Anthropic's input_tokens leaves reads out
    [block] = server.requests[0]["json"]["system"]
    assert block == {"type": "text", "text": "the stable prefix", "cache_control": {"type": "ephemeral"}}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_mirror_a_server_that_reports_no_cache_has_no_cached_tokens(kind):
    with FakeLLM(answer=lambda p: "y") as server:
        provider = openai(server) if kind == "openai" else AnthropicProvider(
            ProviderConfig(base_url=server.url, retries=0, timeout=5), "sk-ant-test-key-1234")
        reply = provider.answer(REQ)
    assert reply.usage.cached_tokens == 0 and reply.usage.input_tokens > 0


def test_cached_tokens_are_counted_for_the_run(tmp_path):
    model = Scripted("rocket_lab")
    d = decider(tmp_path, model)
    ask(d, line("  [2/4] project_slug (rocket_lab):"))
    assert records(tmp_path, "provider_reply")[0]["usage"]["cached"] == 60
    assert d.ctx.counters()["tokens_cached"] == 60


def test_a_grammar_server_is_not_asked_for_the_question_field_a_small_model_filled_at_every_answer():
    """json_object with the schema (llama-cpp-python's grammar): no `question` property, so the object ends after
    `submit`; a person's question, when the model wants one, comes in the text. json_schema (strict) keeps it."""
    from tests.fakes.llm_server import llama_cpp_python

    with FakeLLM(answer=lambda p: '{"action": "human", "text": "Which licence?", "submit": false}', refuse=llama_cpp_python) as server:
        reply = openai(server).answer(REQ)
    strict, grammar = (r["json"]["response_format"] for r in server.requests)
    assert "question" in strict["json_schema"]["schema"]["required"]
    assert "question" not in grammar["schema"]["properties"] and grammar["schema"]["required"] == ["action", "text", "submit"]
    assert reply.text is None and reply.reason == "the answerer asks for a human: Which licence?"


def test_prices_take_a_third_rate_for_cached_input_and_refuse_other_shapes(tmp_path):
    from cursorpilot.errors import BadInput
    from cursorpilot.providers.llm import load_prices

    path = tmp_path / "prices.yaml"
    path.write_text("local: [1.0, 2.0, 0.1]\nplain: [1.0, 2.0]\n")
    prices = load_prices(path)
    assert cost("local", 1_000_000, 0, prices, 500_000) == 0.55 and cost("plain", 1_000_000, 0, prices, 500_000) == 1.0
    path.write_text("bad: [1.0]\n")
    with pytest.raises(BadInput, match="optional usd_per_1M_cached_in"):
        load_prices(path)


def test_a_dialogs_box_is_not_said_twice_nor_its_empty_rows():
    """whiptail/dialog: the question block is the whole box, rows of rules among its options; and ten empty rows above
    it. The box is said once (the screen), the question by its line that asks, the empty rows as one, without the
    indent all rows share."""
    box = ["          │ Target board:                │", "          │ ┌──────────────────────────┐ │",
           "          │ │  rpi4   Raspberry Pi 4    │ │", "          │ │  cm4    Compute Module 4  │ │",
           "          │ │                           │ │", "          │ └──────────────────────────┘ │"]
    live = [" Firmware build", "", "", "", "", "", *box]
    b = build(PromptParts(governing_prompt="Configure the firmware for the Compute Module 4. Keep the rest.", step="1",
                          kind=Kind.MENU, rule_id="r", question="\n".join(box), live=live, earlier=[], environment="", history=(),
                          options="single choice\n→ 1) rpi4   Raspberry Pi 4\n  2) cm4    Compute Module 4", highlighted="rpi4   Raspberry Pi 4",
                          labels=("rpi4   Raspberry Pi 4", "cm4    Compute Module 4")))
    assert b.user.split("# Answer format")[0].count("Compute Module 4") == 1 and "\n\n\n" not in b.user.split("# The question")[0]
    assert "```TERMINAL\nFirmware build\n\n         │ Target board:" in b.user  # the indent all rows share taken off
    assert "Target board:" in b.user.split("# The question")[1]


@pytest.mark.parametrize("reply,question,value", [
    ("Project language [fr]", "> Project language [en]:", "fr"),  # the value in the label's brackets
    ("release 1.4", "> Project release []:", "1.4"),  # the label's last word and the value, as the governing prompt says it
    ("version 0.2.0", "version: (1.0.0) ", "0.2.0"),
])
def test_a_value_said_inside_the_label_is_the_value(reply, question, value):
    from cursorpilot.decide.echo import unlabelled

    assert unlabelled(reply, question)[0] == value


@pytest.mark.parametrize("reply,question", [
    ("Project language [en]", "> Project language [en]:"),  # its own default in its brackets: the question again
    ("release notes for 1.4", "> Project release []:"),  # several words after it: an answer of its own
    ("Rocket Lab", "  [1/4] project_name (My Project):"),
])
def test_mirror_the_label_said_with_its_own_default_or_followed_by_words_is_not_taken_apart(reply, question):
    from cursorpilot.decide.echo import unlabelled

    assert unlabelled(reply, question) is None


def test_a_go_ahead_question_meets_the_sentence_that_says_to_confirm_and_a_list_of_facts_is_cut_at_and_the():
    npm = ('Create the package.json for a new library. Name it demo-widget, version 0.2.0. Use the keywords widget and demo, '
           'the author Eval Bot, the MIT license and the module type "module". Confirm the result when asked.')
    assert bearing(npm, "Is this OK? (yes)") == ("Confirm the result when asked",)
    assert bearing(npm, "license: (ISC)") == ("the MIT license",)  # not `"module"`, which a 0.5B model typed here
    assert bearing(npm, "keywords:") == ("Use the keywords widget and demo",)  # "and demo": not "and the"


def test_a_reply_that_copies_the_sentence_said_next_to_the_question_is_asked_again(tmp_path):
    npm = "Create the package.json. Use the keywords widget and demo, the author Eval Bot. Confirm the result when asked."
    model = Scripted("Use the keywords widget and demo.", "widget, demo")
    d = decider(tmp_path, model, governing=npm)
    _, decision = ask(d, line("keywords: ", live=("author: Eval Bot", "keywords: ")))
    assert (decision.verdict, decision.text) == (Verdict.ANSWER, "widget, demo")
    assert "repeats the governing prompt's sentence, not the value it gives" in model.asked[1].user


def test_mirror_a_sentence_of_the_governing_prompt_that_names_nothing_asked_is_an_answer(tmp_path):
    model = Scripted("Create the project with defaults.")
    d = decider(tmp_path, model, governing="Set it up. Create the project with defaults.")
    _, decision = ask(d, line("What should I say? ", live=("What should I say? ",)))
    assert (decision.verdict, decision.text) == (Verdict.ANSWER, "Create the project with defaults.") and len(model.asked) == 1


def test_mirror_the_value_a_sentence_gives_after_naming_the_question_is_the_answer(tmp_path):
    """npm init's `test command:` answered `node --test`, the value of "The test command is node --test", was taken for
    a copy of that sentence (its own "test" named what is asked) and the run stopped for a person: the yardstick's
    npm-init, 6 of 11 questions."""
    npm = "Create the package.json. The test command is\nnode --test. Use the keywords widget and demo."
    model = Scripted("node --test")
    d = decider(tmp_path, model, governing=npm)
    _, decision = ask(d, line("test command: ", live=("entry point: (index.js)", "test command: ")))
    assert (decision.verdict, decision.text) == (Verdict.ANSWER, "node --test") and len(model.asked) == 1
