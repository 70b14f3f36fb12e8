"""What a small local model needs from us (issue 32): the answers a question takes as an enum, a reply that only repeats
the question or our prompt asked again once and then left to a human, and no internal labels in what it reads.

The decision path with a scripted provider here; the real SDKs against the fake server replaying llama-cpp-python's
own error are in tests/unit/test_llm_providers.py, real programs in tests/integration/test_llm_e2e.py."""

import json

import pytest

from cursorpilot.clock import FakeClock
from cursorpilot.detect.classifier import Timing, classify
from cursorpilot.detect.profiles import load_profile
from cursorpilot.detect.snapshot import snapshot_from_text
from cursorpilot.decide.accepts import accepted, offered_keys
from cursorpilot.decide.prompt_files import PromptFiler
from cursorpilot.decide.context import PromptParts, build
from cursorpilot.decide.decider import Decider
from cursorpilot.decide.echo import echoed, own_lines, screen_rows
from cursorpilot.decide.question import Choice, Kind, Question, Verdict
from cursorpilot.providers.base import AnswerRequest, Reply, Usage
from cursorpilot.providers.local import is_local
from cursorpilot.providers.schema import names_structured, reply_schema, schema_for
from cursorpilot.records.redact import Redactor
from cursorpilot.run_context import RunContext
from cursorpilot.records.transcript import Transcript


def line(text: str, kind: str = Kind.QUESTION, **kw) -> Question:
    return Question(kind=kind, text=text, key=text, source="generic.test", **kw)


MENU = (Choice("0", "Vanilla"), Choice("1", "Vue"), Choice("2", "React"))


# -- what a question takes ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("q,takes", [
    (line("Continue with the install? [Y/n]"), ("y", "n")),
    (line("Delete all files? [y/N] "), ("y", "n")),
    (line("Proceed? (yes/no) "), ("yes", "no")),
    (line("Are you sure you want to continue connecting (yes/no/[fingerprint])? "), ("yes", "no")),
    (line("replace a.txt? [y]es, [n]o, [A]ll, [N]one, [r]ename: "), ("y", "n", "A", "N", "r")),
    (line("(1/1) Stage this hunk [y,n,q,a,d,e,?]? "), ("y", "n", "q", "a", "d", "e")),  # git: the whole list, not its y,n
    (line("(1/3) Stage this hunk [y,n,q,a,d,j,J,g,/,e,?]? "), ("y", "n", "q", "a", "d", "j", "J", "g", "e")),  # as git 2.39 asks
    (line("Overwrite? [y/N]", kind=Kind.INPUT), ("y", "n")),  # a yes/no a rule classed as a line of text
    (line("◆  Install with npm and start now?\n│  ● Yes / ○ No\n└", single_key=True, asked="Install with npm and start now?"),
     ("y", "n")),  # clack: the keys under the question it asks, not the words
    (line("Select a framework:", kind=Kind.MENU, choices=MENU), ("Vanilla", "Vue", "React")),
    (line("Allow?", kind=Kind.PERMISSION, choices=(Choice("a", "Allow once", kind="allow_once"), Choice("r", "Reject", kind="reject_once"))),
     ("Allow once", "Reject")),
])
def test_a_question_that_says_what_it_takes_constrains_the_answer(q, takes):
    assert accepted(q) == takes


@pytest.mark.parametrize("q", [
    line("package name: (work) ", kind=Kind.INPUT),  # free text: anything goes
    line("Enter the (n)ame of the project: ", kind=Kind.INPUT),  # one bracketed letter is not a list of keys
    line("Pick toppings", kind=Kind.MENU, choices=MENU, multi=True),  # a multi-select's combinations
    line("Continue? [y/n]", kind=Kind.UNDECIDED),  # a screen no rule explains: the model may say WAIT
    line("Agent stopped. Continue? [y/n]", kind=Kind.TURN_END),
    line("Commit message [y/n] in the body:", kind=Kind.INPUT, multiline=True),
])
def test_mirror_what_does_not_say_what_it_takes_is_not_constrained(q):
    assert accepted(q) == ()


def test_only_the_last_two_lines_spell_the_question():
    assert offered_keys("Earlier: Continue? [y/n]\nok\nok\nProject name: ") == ()


def test_the_schema_allows_only_the_offered_answers_and_keeps_the_empty_one_and_wait_and_human():
    schema = reply_schema(("y", "n"))
    assert schema["properties"]["text"] == {"type": "string", "enum": ["", "y", "n"]}
    assert schema["properties"]["action"]["enum"] == ["type", "wait", "human"]
    assert schema["required"] == ["action", "text", "submit", "question"] and schema["additionalProperties"] is False
    assert reply_schema(())["properties"]["text"] == {"type": "string"}  # free text stays free
    assert schema_for("turn_end", ("y",))[0] == "judge_turn"  # a verdict is never constrained to a question's keys


@pytest.mark.parametrize("error,named", [
    ("Error code: 500 - {'error': {'message': \"Input should be 'text' or 'json_object'\"}}", True),
    ("HTTP 400: response_format is not supported by this server", True),
    ("HTTP 422: tool_choice: unknown", True),
    ("HTTP 500: CUDA out of memory", False),
    ("connection error: Connection error. (tried http://127.0.0.1:9/v1/chat/completions)", False),
    ("HTTP 429: rate limited", False),
])
def test_an_error_naming_the_structured_output_parameters_whatever_its_status(error, named):
    assert names_structured(error) is named


# -- a server of one's own needs no key -------------------------------------------------------------------------------
@pytest.mark.parametrize("url,local", [
    ("http://127.0.0.1:8765/v1", True), ("http://localhost:11434/v1", True), ("http://[::1]:8000/v1", True),
    ("http://192.168.1.20:8000/v1", True), ("http://10.0.0.5/v1", True), ("http://ollama:11434/v1", True),
    ("http://gpu.local:8080/v1", True),
    ("https://api.openai.com/v1", False), ("https://openrouter.ai/api/v1", False), ("http://8.8.8.8/v1", False),
    (None, False), ("", False),
])
def test_which_base_urls_are_a_server_of_ones_own(url, local):
    assert is_local(url) is local


@pytest.mark.parametrize("screen", ["commit 3f1e9a0\nAuthor: Dev\n\n    Fix issue #145\n:", "Fix issue #1\n(END)", "144\n--More--(45%)",
                                    " Manual page ls(1) line 1 (press h for help or q to quit)"])
def test_a_pager_at_its_prompt_takes_the_keys_its_rule_names_typed_without_enter(screen):
    """less's ':' spells no keys: a 0.5B model filled it with a commit's subject, typed into less as commands."""
    profile = load_profile("generic")
    c = classify(profile, snapshot_from_text(screen, at_line_end=True), Timing(quiet_for=5, canonical=False))  # it reads keys
    assert (c.state, c.rule_id, c.submit) == ("question", "generic.pager", False)
    (rule,) = [r for r in profile.rules if r.id == c.rule_id]
    q = line(c.block, keys=tuple(rule.keys), single_key=True)
    assert accepted(q) == ("q", "<space>")


@pytest.mark.parametrize("screen", ["Release name:", "Project name: ", "Enter a value:", "ratio 3:", ">>> ", "Press RETURN to continue"])
def test_mirror_a_line_prompt_that_ends_with_a_colon_is_no_pager(screen):
    c = classify(load_profile("generic"), snapshot_from_text(screen, at_line_end=True), Timing(quiet_for=5, canonical=False))
    assert c.rule_id != "generic.pager"


@pytest.mark.parametrize("canonical", [True, None])
def test_mirror_a_colon_alone_is_a_pager_only_where_the_kernel_says_it_reads_keys(canonical):
    """`read -p ':'` shows what less shows; a line reader (canonical mode), or a terminal whose mode is unknown, is asked
    for a line as before: the row's words alone never narrow the answer to q and space."""
    c = classify(load_profile("generic"), snapshot_from_text("commit 3f1e9a0\n    Fix issue #145\n:", at_line_end=True),
                 Timing(quiet_for=5, canonical=canonical))
    assert (c.rule_id, c.submit) == ("generic.waiting_input", True)


# -- a reply that only repeats ----------------------------------------------------------------------------------------
def prompt(question: str, kind: str = "input", options: str = "", governing: str = "Create the project with defaults.") -> tuple[str, str]:
    built = build(PromptParts(governing_prompt=governing, step="1/1: npm init", kind=kind, rule_id="generic.library_input",
                              question=question, live=["This utility will walk you through", question], earlier=[],
                              environment="", history=(), options=options))
    return built.system, built.user


def test_our_prompt_carries_no_internal_labels():
    """A 0.5B model typed `Kind: input (detected by rule generic.library_input)` into sphinx-quickstart."""
    system, user = prompt("package name: (work) ", options="single choice\n  1) a")
    assert "generic.library_input" not in user and "detected by rule" not in user
    assert "as cursor-pilot read them" not in user and "cursor-pilot" not in system + user


@pytest.mark.parametrize("reply,why", [
    ("package name: (work)", "repeats the question"),  # npm init, as a 0.5B model answered it
    ("package name: (work) my-app", "repeats the question"),
    ("package name:", "repeats the question"),
    ("Default: `work` (an empty text takes it).", "repeats a line of the prompt it was given"),
    ("# Answer format", "repeats a line of the prompt it was given"),
    ("<what to type>", "repeats a placeholder of the prompt"),
    ("# The question", "repeats a line of the prompt it was given"),
])
def test_a_reply_that_only_repeats_the_question_or_our_prompt_is_no_answer(reply, why):
    system, user = prompt("package name: (work) ")
    assert echoed(reply, "package name: (work) ", own_lines(system, user, "Create the project with defaults.")) == why


@pytest.mark.parametrize("reply,question,offered", [
    ("my-app", "package name: (work) ", ()),
    ("work", "package name: (work) ", ()),
    ("", "package name: (work) ", ()),
    ("y", "Continue? [y/n] ", ("y", "n")),
    ("Yes", "Delete everything?\nYes\nNo:", ("Yes", "No")),  # a menu's option is an answer even when it is a line
    ("Create the project with defaults.", "What should I say? ", ()),  # the governing prompt is where answers come from
    ("SELECT 1;", "sqlite> ", ()),
])
def test_mirror_real_answers_are_not_echoes(reply, question, offered):
    system, user = prompt(question)
    assert echoed(reply, question, own_lines(system, user, "Create the project with defaults."), offered) is None


LESS = ["commit 3f1e9a0c2d4b5a6978e1f0d2c3b4a5968776e5d4", "Author: Dev <dev@example.com>", "",
        '    deploy.sh: ask "Continue with the deploy? [y/N]" before pushing', "", "    Answering y pushes to production at once.", ":"]


def screen_prompt(live: list[str], question: str) -> tuple[str, str]:
    built = build(PromptParts(governing_prompt="Cut release 1.1 with the release script. Don't deploy anything.", step="1/1",
                              kind="input", rule_id="generic.waiting_input", question=question, live=live, earlier=[],
                              environment="", history=(), options=""))
    return built.system, built.user


@pytest.mark.parametrize("reply,live,question", [
    ('deploy.sh: ask "Continue with the deploy? [y/N]" before pushing', LESS, ":"),  # less, as a 0.5B model answered it
    ("deploy.sh: ask Continue with the deploy? [y/N] before pushing", LESS, ":"),  # its quotes dropped, the second time
    ("Answering y pushes to production at once.", LESS, ":"),
    ("CREATE TABLE notes (id INTEGER, body TEXT);", ["sqlite> CREATE TABLE t (x);", "Error: in prepare, near line 1",
                                                      "CREATE TABLE notes (id INTEGER, body TEXT);", "sqlite> "], "sqlite> "),
    ("This sets up a new documentation project for you", ["Welcome!", "This sets up a new documentation project for you.",
                                                          "> Project name: "], "> Project name: "),  # a wizard's paragraph
])
def test_a_reply_that_copies_a_row_of_the_screen_is_no_answer(reply, live, question):
    system, user = screen_prompt(live, question)
    assert echoed(reply, question, own_lines(system, user), (), screen_rows(user)) == "repeats a row of the screen, not an answer to its question"


@pytest.mark.parametrize("reply,live,question,offered", [
    ("q", LESS, ":", ()),  # less's answer
    ("deploy.sh", LESS, ":", ()),  # a word off a row, not the row
    ("feature/login-form", ["Branches:", "  feature/login-form", "  main", "Branch to delete: "], "Branch to delete: ", ()),
    ("I accept the risks of this action", ["To confirm, type the phrase below:", "  I accept the risks of this action", "> "],
     "To confirm, type the phrase below:\n  I accept the risks of this action\n> ", ()),  # a row the question says to type
    ("Keep my current settings", ["What next?", "Keep my current settings", "Start over from defaults", "> "], "What next?",
     ("Keep my current settings", "Start over from defaults")),  # an option the question offers
])
def test_mirror_a_reply_that_shares_a_row_or_is_asked_to_copy_it_is_an_answer(reply, live, question, offered):
    system, user = screen_prompt(live, question)
    assert echoed(reply, question, own_lines(system, user), offered, screen_rows(user)) is None


def test_a_copied_row_is_asked_again_saying_so_and_the_key_that_follows_is_typed(tmp_path):
    """The decision path, with the prompt it builds: less's ':' answered with a commit's subject, then 'q'."""
    model = Scripted('deploy.sh: ask "Continue with the deploy? [y/N]" before pushing', "q")
    q = line(":", kind=Kind.INPUT, live=tuple(LESS))
    reply, decision = ask(decider(tmp_path, model), q)
    assert (decision.verdict, decision.text) == (Verdict.ANSWER, "q") and len(model.asked) == 2
    assert "repeats a row of the screen" in model.asked[1].user


class Scripted:
    """A model provider that answers from a list, recording what it was asked."""

    name = "openai"
    needs_prompt = True

    def __init__(self, *texts):
        self.texts, self.asked = list(texts), []

    def answer(self, request: AnswerRequest) -> Reply:
        self.asked.append(request)
        return Reply(text=self.texts.pop(0), source="openai:small", raw="raw", usage=Usage(100, 5, 0.5, None, 1))


def decider(tmp_path, provider) -> Decider:
    clock, redactor = FakeClock(), Redactor(env={})
    run = RunContext(tx=Transcript(tmp_path / "t.jsonl", "r", clock, redactor), redactor=redactor, clock=clock, log_dir=tmp_path,
                     run_id="r", provider=provider, allow=frozenset())
    governing = "Create the project with defaults."
    return Decider(run, governing, None, None, PromptFiler(run, 1, "1/1", None, governing))


def records(tmp_path, type_: str) -> list[dict]:
    return [r for r in map(json.loads, (tmp_path / "t.jsonl").read_text().splitlines()) if r["type"] == type_]


NPM = line("package name: (work) ", kind=Kind.INPUT, live=("This utility will walk you through", "package name: (work) "))


def ask(d: Decider, q: Question):
    reply = d.call(d.request(q))
    return reply, d.after(q, reply)


def test_an_echo_is_asked_again_once_saying_why_and_the_second_answer_is_typed(tmp_path):
    model = Scripted("package name: (work)", "my-app")
    d = decider(tmp_path, model)
    reply, decision = ask(d, NPM)
    assert (decision.verdict, decision.text) == (Verdict.ANSWER, "my-app")
    again = model.asked[1].user  # short: the screen, the governing prompt, what to give and what was no answer
    assert len(model.asked) == 2 and "(not 'package name: (work)': that repeats the question)" in again
    assert again.index("package name: (work)\n```") < again.index("Create the project with defaults.") < again.index("Reply with")
    assert (tmp_path / "prompts" / "step-01" / "001-again-prompt.md").read_text().count("Reply with the value to type") == 1
    assert reply.usage.calls == 2 and reply.usage.input_tokens == 200
    assert [r["error"] for r in records(tmp_path, "provider_retry")] == ["the reply 'package name: (work)' repeats the question: asked again"]


def test_an_echo_twice_goes_to_a_human_and_nothing_is_typed(tmp_path):
    model = Scripted("package name: (work)", "# Answer format")
    reply, decision = ask(decider(tmp_path, model), NPM)
    assert decision.verdict == Verdict.ESCALATE and decision.text is None
    assert "'# Answer format' repeats a line of the prompt it was given, after it was asked again" in decision.why
    assert len(model.asked) == 2 and reply.raw == "raw"


def test_mirror_a_real_answer_is_asked_once(tmp_path):
    model = Scripted("my-app")
    _, decision = ask(decider(tmp_path, model), NPM)
    assert decision.text == "my-app" and len(model.asked) == 1 and records(tmp_path, "provider_retry") == []


def test_the_request_carries_what_the_question_takes_and_the_prompt_says_it(tmp_path):
    model = Scripted("n")
    d = decider(tmp_path, model)
    _, decision = ask(d, line("Overwrite the key? [y/N] "))
    assert model.asked[0].accepts == ("y", "n") and decision.text == "n"
    assert "It takes one of: y, n (or an empty text: the default)." in model.asked[0].user


@pytest.mark.parametrize("said,typed", [
    ("package name: demo-widget", "demo-widget"),  # what the 0.5B model wrote, once the question was not all it said
    ("package name: (work) demo-widget", "demo-widget"),
    ("demo-widget", "demo-widget"),
    ("Package Name:demo-widget", "demo-widget"),
])
def test_the_questions_own_label_before_an_answer_is_taken_off_and_recorded(tmp_path, said, typed):
    model = Scripted(said)
    reply, decision = ask(decider(tmp_path, model), NPM)
    assert decision.text == typed and len(model.asked) == 1
    assert any("the question's own label" in r for r in reply.removed) is (said != typed)


@pytest.mark.parametrize("said,question", [
    ("Projects: 3", "> Project"),  # a longer word is not the label
    ("y", "Continue? [y/n] "),
    ("SELECT 1;", "sqlite> "),
    (">>> x", ">>> "),  # a REPL's marks are no label
])
def test_mirror_what_merely_resembles_a_label_is_typed_as_given(tmp_path, said, question):
    from cursorpilot.decide.echo import unlabelled

    assert unlabelled(said, question) is None


def test_a_question_behind_its_marks_is_still_the_question():
    """create-vite: the 0.5B model answered clack's confirm with `install with npm and start now?`."""
    assert echoed("install with npm and start now?", "◆  Install with npm and start now?\n│  ● Yes / ○ No") == "repeats the question"


@pytest.mark.parametrize("said,question", [
    ("Project name:", "> Project name: "),  # sphinx-quickstart, as the 0.5B model answered it
    ("Project release: ", "> Project release []: "),
    ("Project language [en]: en", "> Project language [en]: "),  # the question and its own default: no answer
    ("package name: work", "package name: (work) "),
])
def test_sphinx_quickstarts_questions_repeated_are_echoes(said, question):
    from cursorpilot.decide.echo import unlabelled

    assert unlabelled(said, question) is None and echoed(said, question) == "repeats the question"


def test_a_label_without_its_default_is_still_the_label():
    from cursorpilot.decide.echo import unlabelled

    assert unlabelled("Project release: 1.4", "> Project release []: ") == ("1.4", "Project release:")
    assert unlabelled("Project language: fr", "> Project language [en]: ") == ("fr", "Project language:")
    assert unlabelled("Project language [fr]: fr", "> Project language [en]: ") == ("fr", "Project language [fr]:")  # as said


class Raw(Scripted):
    """A model whose replies are cleaned like a real provider's (a multi-line text is refused)."""

    def answer(self, request: AnswerRequest) -> Reply:
        from cursorpilot.providers.llm import clean_reply

        self.asked.append(request)
        raw = self.texts.pop(0)
        cleaned = clean_reply(raw, request.multiline)
        return Reply(text=cleaned.text, source="openai:small", reason=cleaned.reason, raw=raw, usage=Usage(100, 5, 0.5, None, 1))


def test_several_lines_at_a_one_line_prompt_are_asked_again_once_then_a_human(tmp_path):
    """sqlite3: the 0.5B model answered `sqlite>` with three rows of data; refused, it went straight to a human."""
    sqlite = line("sqlite> ", kind=Kind.INPUT, live=("sqlite> ",))
    model = Raw("apple 3\nbanana 5", "CREATE TABLE fruit (name TEXT, qty INTEGER);")
    _, decision = ask(decider(tmp_path, model), sqlite)
    assert decision.text == "CREATE TABLE fruit (name TEXT, qty INTEGER);"
    assert "that is several lines, and the prompt takes one" in model.asked[1].user
    model = Raw("apple 3\nbanana 5", "apple 3\nbanana 5")
    _, decision = ask(decider(tmp_path / "2", model), sqlite) if (tmp_path / "2").mkdir() is None else None
    assert decision.verdict == Verdict.ESCALATE and "multi-line reply refused" in decision.why and len(model.asked) == 2


def test_a_hidden_prompt_asked_again_keeps_its_rules(tmp_path):
    """The second asking is short, but a passphrase prompt's notes (never make one up) go with it."""
    passphrase = line("Enter passphrase (empty for no passphrase): ", kind=Kind.INPUT, secret=True,
                      live=("Enter passphrase (empty for no passphrase): ",))
    model = Scripted("Enter passphrase (empty for no passphrase):", "? which passphrase")
    reply, decision = ask(decider(tmp_path, model), passphrase)
    assert "never make one up" in model.asked[1].user
    assert decision.verdict == Verdict.ESCALATE
