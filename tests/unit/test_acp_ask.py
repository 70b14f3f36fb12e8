"""ACP requests as Questions, Decisions as protocol replies: pure, no agent needed."""

from cursorpilot.channels.acp import ask
from cursorpilot.decide.question import Decision, Verdict

GEMINI = [{"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
          {"optionId": "proceed_once", "name": "Allow once", "kind": "allow_once"},
          {"optionId": "cancel", "name": "No, suggest changes", "kind": "reject_once"}]
CALL = {"toolCallId": "c1", "title": "Shell", "kind": "execute", "rawInput": {"command": "rm -rf ~/old"}}


def test_the_action_holds_the_command_the_paths_and_the_diff():
    call = {**CALL, "locations": [{"path": "/p/a.txt"}], "content": [{"type": "diff", "path": "/p/a.txt", "newText": "x\ny"}]}
    action = ask.describe(call)
    assert "$ rm -rf ~/old" in action.text and "path: /p/a.txt" in action.text and "+x\n+y" in action.text and action.says_what


def test_every_input_field_is_described_not_only_the_known_ones():
    action = ask.describe({"title": "Run", "kind": "execute", "rawInput": {"script": "curl x | sh", "timeout": 5}})
    assert "script: curl x | sh" in action.text and "timeout: 5" in action.text


def test_what_says_what_a_call_does():
    gemini_shell = {"title": "npm test", "kind": "execute", "content": [{"type": "content", "content": {"type": "text", "text": "[cwd /p]"}}]}
    gemini_write = {"title": "Writing to a.txt", "kind": "edit",
                    "content": [{"type": "diff", "path": "/p/a.txt", "oldText": "", "newText": "hi"}]}
    assert ask.describe(gemini_shell).says_what and ask.describe({"title": "ls", "kind": "execute"}).says_what
    assert "(a new file)" in ask.describe(gemini_write).text
    for bare in ({"title": "Shell", "kind": "execute"}, {"title": "edit", "kind": "edit"}, {"kind": "fetch"},
                 {"title": "Tool call", "kind": "other", "rawInput": {}, "content": [{"type": "content", "content": {"text": " "}}]}):
        assert not ask.describe(bare).says_what, bare


def test_always_becomes_once_without_standing_permission():
    q = ask.permission_question(CALL, GEMINI)
    always = q.choices[0]
    d = Decision(Verdict.ANSWER, text="Allow for this session", choices=(always,), source="openai:m")
    assert ask.permission_reply(q, d, standing=False).reply == {"outcome": {"outcome": "selected", "optionId": "proceed_once"}}
    assert ask.permission_reply(q, d, standing=True).reply["outcome"]["optionId"] == "proceed_always"


def test_a_model_may_not_approve_what_says_nothing_but_may_refuse_it():
    q = ask.permission_question({"title": "Shell", "kind": "execute"}, GEMINI)
    allow = Decision(Verdict.ANSWER, text="Allow once", choices=(q.choices[1],), source="openai:m")
    assert ask.permission_reply(q, allow, False, described=False).why == ask.UNDESCRIBED
    assert ask.permission_reply(q, Decision(Verdict.ANSWER, text="x", choices=(q.choices[1],), source="rules:r"), False, False).reply
    no = Decision(Verdict.ANSWER, text="No", choices=(q.choices[2],), source="openai:m")
    assert ask.permission_reply(q, no, False, described=False).reply["outcome"]["optionId"] == "cancel"


def test_standing_permission_is_read_from_the_governing_prompt():
    assert ask.grants_standing_permission("You may always allow the test runner.")
    assert not ask.grants_standing_permission("Approve tests; never delete.")


def test_a_reply_naming_no_option_is_never_sent():
    q = ask.permission_question(CALL, GEMINI)
    assert ask.permission_reply(q, Decision(Verdict.ANSWER, text="maybe", source="x"), False).reply is None


def test_form_content_is_typed_by_the_schema():
    one = {"properties": {"port": {"type": "integer"}}, "required": ["port"]}
    assert ask.form_content(one, "8080") == {"port": 8080} and ask.form_content(one, "eighty") is None
    two = {"properties": {"name": {"type": "string"}, "tls": {"type": "boolean"}}, "required": ["name"]}
    assert ask.form_content(two, '{"name": "web", "tls": true}') == {"name": "web", "tls": True}
    assert ask.form_content(two, '{"tls": true}') is None


def test_turn_end_question_is_the_paragraph_that_asks():
    assert ask.turn_end_question("Done.\n\nShould I also add a test?") == "Should I also add a test?"
    assert ask.turn_end_question("Done. All tests pass.") is None


def test_the_same_tool_call_has_the_same_fingerprint():
    assert ask.fingerprint(CALL) == ask.fingerprint(dict(CALL, toolCallId="c2"))
    assert ask.fingerprint(CALL) != ask.fingerprint({**CALL, "rawInput": {"command": "ls"}})
    edit = {"title": "a.txt: x => y", "kind": "edit", "content": [{"type": "diff", "path": "/p/a.txt", "newText": "y"}]}
    assert ask.fingerprint(edit) != ask.fingerprint({**edit, "content": [{"type": "diff", "path": "/p/a.txt", "newText": "z"}]})
