import pytest

from cursorpilot.keys import ReplyError, key_bytes, needs_human, to_writes


def data(reply, **kw):
    return [w.data for w in to_writes(reply, **kw)]


def test_text_then_enter_as_separate_write_after_a_gap():
    writes = to_writes("yes", enter_delay=0.15)
    assert [w.data for w in writes] == [b"yes", b"\r"]
    assert writes[1].delay == 0.15


def test_empty_reply_means_press_enter():
    assert data("") == [b"\r"]


def test_key_only_reply_gets_no_extra_enter_and_each_key_is_its_own_write():
    writes = to_writes("<down><down><enter>", key_delay=0.05)
    assert [w.data for w in writes] == [b"\x1b[B", b"\x1b[B", b"\r"]
    assert [w.delay for w in writes] == [0.0, 0.05, 0.05]


def test_all_named_keys_and_ctrl_letters():
    assert data("<shift-tab>") == [b"\x1b[Z"]
    assert data("<esc>") == [b"\x1b"]
    assert data("<ctrl-c>") == [b"\x03"]
    assert key_bytes("ctrl-d") == b"\x04"
    assert data("<up><left><right><tab><space><backspace>") == [b"\x1b[A", b"\x1b[D", b"\x1b[C", b"\t", b" ", b"\x7f"]


def test_single_key_prompt_gets_no_enter():
    assert data("y", submit=False) == [b"y"]


def test_text_ending_with_key_gets_no_extra_enter():
    assert data("abc<tab>") == [b"abc", b"\t"]


def test_unknown_angle_words_are_typed_literally():
    assert data("use <div> here") == [b"use <div> here", b"\r"]


def test_multi_line_text_is_refused():
    with pytest.raises(ReplyError):
        to_writes("line one\nline two")


def test_question_mark_prefix_asks_for_a_human():
    assert needs_human("? which database do you mean")
    assert not needs_human("?not a request")
    assert not needs_human("y")


def test_utf8_text_is_encoded():
    assert data("café") == ["café".encode(), b"\r"]


def test_several_lines_go_as_one_bracketed_paste_only_where_both_allow_it():
    from cursorpilot.keys import Modes, ReplyError, to_writes

    writes = to_writes("Plan:\n1. route\n2. test", multiline=True, modes=Modes(bracketed_paste=True), enter_delay=0.2)
    assert [w.data for w in writes] == [b"\x1b[200~Plan:\n1. route\n2. test\x1b[201~", b"\r"]
    assert writes[1].delay == 0.2 and writes[0].label == "<paste 3 lines>"
    with pytest.raises(ReplyError, match="bracketed paste"):
        to_writes("a\nb", multiline=True, modes=Modes(bracketed_paste=False))
    with pytest.raises(ReplyError, match="one line"):
        to_writes("a\nb", multiline=False, modes=Modes(bracketed_paste=True))
    assert [w.data for w in to_writes("one line\n", multiline=False)] == [b"one line", b"\r"]  # a trailing newline is not a second line


@pytest.mark.parametrize("answer", ["'active'", '"a b"', "' x '", "it's", "  lead", "trail  "])
def test_answer_characters_reach_the_program_byte_for_byte(answer):
    """Quotes and spaces belong to the answer: at a Python prompt 'active' is a string, active a NameError."""
    assert data(answer) == [answer.encode(), b"\r"]


def test_arrows_follow_application_cursor_mode():
    """ncurses' keypad() turns DECCKM on: a real terminal then sends ESC O A; ESC [ A reads as a lone Esc (Cancel)."""
    from cursorpilot.keys import Modes, to_writes

    assert [w.data for w in to_writes("<down><up><home><end>", modes=Modes(app_cursor=True))] == [b"\x1bOB", b"\x1bOA", b"\x1bOH", b"\x1bOF"]
    assert [w.data for w in to_writes("<down><pgdn>")] == [b"\x1b[B", b"\x1b[6~"]


def test_keypad_keys_follow_the_keypad_mode():
    from cursorpilot.keys import Modes, to_writes

    assert [w.data for w in to_writes("<kp-1><kp-enter>", modes=Modes(app_keypad=True))] == [b"\x1bOq", b"\x1bOM"]
    assert [w.data for w in to_writes("<kp-1><kp-enter>")] == [b"1", b"\r"]


def test_single_key_press_has_no_enter():
    assert data("<key:q>") == [b"q"]
    assert data("<key:Y>") == [b"Y"]
    assert data("<key:<>") == [b"<key:<>", b"\r"]  # not a key token: typed as text


def test_enter_after_text_waits_for_its_echo_when_asked():
    from cursorpilot.keys import to_writes

    writes = to_writes("fuzzy term", echo_check=True)
    assert writes[-1].echo == "fuzzy term" and writes[-1].data == b"\r"
    assert to_writes("<down><enter>", echo_check=True)[-1].echo is None
