import pytest

from cursorpilot.durations import parse_duration
from cursorpilot.errors import BadInput
from cursorpilot.redact import MASK, Redactor


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
