import pytest

from cursorpilot.durations import parse_duration
from cursorpilot.errors import BadInput
from cursorpilot.records.redact import HOLD, MASK, Redactor, Stream


@pytest.mark.parametrize("text,seconds", [("90s", 90), ("45m", 2700), ("1h30m", 5400), ("2.5", 2.5), ("250ms", 0.25)])
def test_durations(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["", "abc", "10x", "-5", "5m3"])
def test_bad_durations(bad):
    with pytest.raises(BadInput):
        parse_duration(bad)


def test_redaction_of_common_secret_shapes_and_env_values():
    r = Redactor(env={"OPENAI_API_KEY": "plain-value-123456"})
    text = (
        "key sk-abcdefghijklmnopqrstuv and sk-ant-abc12345678 AKIAABCDEFGHIJKLMNOP ghp_abcdefghijklmnopqrstuvwxyz "
        "API_TOKEN=hunter2hunter2 Authorization: Bearer abcdefghijklmnop env plain-value-123456"
    )
    out = r.text(text)
    for secret in ("sk-abcdefghijklmnopqrstuv", "sk-ant-abc12345678", "AKIAABCDEFGHIJKLMNOP", "ghp_abc", "hunter2", "abcdefghijklmnop", "plain-value-123456"):
        assert secret not in out
    assert MASK in out
    assert r.value({"a": ["x sk-abcdefghijklmnopqrstuv"]}) == {"a": [f"x {MASK}"]}


def test_redaction_after_a_label_at_a_line_end_leaves_the_closing_fence_of_a_prompt():
    """After `API token:` the free-text redactor ate the closing fence of the program-output block in the model's
    prompt: the program's text was no longer fenced off as untrusted."""
    prompt = "# The screen\n```TERMINAL\nAPI token:\n```\n# The question\nAPI token:"
    assert Redactor(env={}).text(prompt) == prompt


def test_redaction_keeps_the_words_after_a_password_label_on_the_same_row():
    """On the console `Password: [REDACTED] me? [y/N]` lost "Remember"."""
    assert Redactor(env={}).text("Password: Remember me? [y/N] ") == "Password: Remember me? [y/N] "


def test_redaction_never_crosses_a_line_break():
    """An ftp session's no-echo `Password:` and the server's `230 Login successful.` on the next row: the model was
    shown `[REDACTED] Login successful.`, and the status it needed was gone."""
    r = Redactor(env={})
    for text in ("Password:\r\n230 Login successful.", "Password:\n230 Login successful.", "TOKEN=\nnext", "Bearer\nabcdefghijklmnopqrst"):
        assert r.text(text) == text


@pytest.mark.parametrize("text,expected", [
    ("Password: hunter2", f"Password: {MASK}"),
    ("api_key: abc123  \nok", f"api_key: {MASK}  \nok"),
    ("API_KEY=abc123 more", f"API_KEY={MASK} more"),
    ('DB_PASSWORD="a b c"', f"DB_PASSWORD={MASK}"),
    ("Authorization: Bearer abcdefghijklmnop\nnext", f"Authorization: Bearer {MASK}\nnext"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEabcdefgh12345\nabcdEFGH1234==\n-----END RSA PRIVATE KEY-----\n```",
     f"-----BEGIN RSA PRIVATE KEY-----\n{MASK}\n{MASK}\n-----END RSA PRIVATE KEY-----\n```"),
])
def test_redaction_masks_the_value_and_keeps_the_name_and_the_lines(text, expected):
    assert Redactor(env={}).text(text) == expected


@pytest.mark.parametrize("text", ["Password: ******", "Token: <secret:tok>", "tokens: <enter>", "API key: [REDACTED]",
                                  "Secret: ```", "password: ----"])
def test_redaction_leaves_what_is_no_value(text):
    assert Redactor(env={}).text(text) == text


def test_a_secret_typed_during_the_run_is_redacted_from_then_on():
    r = Redactor(env={})
    assert r.text("echo s3cr3t-value") == "echo s3cr3t-value"
    r.add("s3cr3t-value")
    r.add("abc")  # too short to search for: every `abc` would go
    assert r.text("echo s3cr3t-value abc") == f"echo {MASK} abc"


def test_a_stream_finds_a_value_split_between_two_writes_and_keeps_each_pieces_time():
    r = Redactor(env={}, secrets=["MYTOK-123"])
    stream = Stream(r.text, lambda: r.longest)
    out = [*stream.feed(1.0, "Using token MY"), *stream.feed(2.0, "TOK-123 for upload\r\nnext"), *stream.feed(3.0, " line\n"),
           *stream.flush()]
    assert "".join(text for _, text in out) == f"Using token {MASK} for upload\r\nnext line\n"
    assert [t for t, _ in out] == sorted(t for t, _ in out) and out[0][0] == 1.0
    assert "MYTOK" not in repr(out)


def test_a_stream_holds_no_more_than_an_unfinished_line_of_a_full_screen_program():
    stream = Stream(Redactor(env={}).text)
    assert stream.feed(1.0, "\x1b[H" + "x" * 2000) == [(1.0, "\x1b[H" + "x" * (2000 - HOLD))]
    assert stream.feed(2.0, "y") == [(1.0, "x")]  # held text goes out at its own time
    assert stream.flush() == [(2.0, "x" * (HOLD - 1) + "y")]



def test_a_secret_spelled_as_the_hex_of_its_bytes_is_redacted_too():
    """ssh-first-connect: a passphrase typed again at a screen no rule knew was recorded by keys_sent as data (masked)
    and as hex (in clear). A value is searched for in both spellings; other hex passes."""
    r = Redactor(env={})
    r.add("tidal-marmot-5813")
    typed = {"keys": "tidal-marmot-5813", "data": "tidal-marmot-5813", "hex": "tidal-marmot-5813".encode().hex()}
    assert r.value(typed) == {"keys": MASK, "data": MASK, "hex": MASK}
    assert r.value({"hex": "0d", "data": "\r"}) == {"hex": "0d", "data": "\r"}
    env = Redactor(env={"OPENAI_API_KEY": "sk-test-abcdef123456"})
    assert env.text("sk-test-abcdef123456".encode().hex()) == MASK
