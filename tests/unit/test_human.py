"""The human rung's parts, in milliseconds: the signed links, one question's race (first answer wins, from many
threads at once), what a person is shown, and the options checked before anything runs."""

from __future__ import annotations

import threading

import pytest

from cursorpilot.decide.question import Choice, Kind, Question
from cursorpilot.errors import BadInput
from cursorpilot.human import html
from cursorpilot.human.asked import ACCEPTED, FORBIDDEN, GONE, REFUSED, TAKEN, asked
from cursorpilot.human.humans import configure
from cursorpilot.human.page import Hosts, is_loopback, parse_listen
from cursorpilot.human.race import Board, Offer, Pending
from cursorpilot.human.tokens import Signer

Q = Question(kind=Kind.QUESTION.value, text="Deploy to production? [y/N]", key="k", source="generic.yes_no",
             live=("building...", "Deploy to production? [y/N]"))


def one(**kw):
    return asked(Q, "no rule matches this prompt", step=1, steps=2, step_name="deploy", program="./deploy.sh",
                 governing_prompt="Ship it, carefully.", redact=lambda s: s.replace("hunter2", "[REDACTED]"), **kw)


# -- the links ---------------------------------------------------------------------------------------------------------
def test_a_token_reads_back_only_with_its_runs_key():
    signer = Signer()
    decision = Signer.new_id()
    token = signer.token(decision, None)
    assert signer.read(token, now=1e12) == (decision, "")
    assert Signer().read(token, now=0)[0] is None  # another run's key: worth nothing


@pytest.mark.parametrize("mangle", [lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"),  # the MAC
                                    lambda t: ("B" if t[0] != "B" else "C") + t[1:],  # the body (another id, another expiry)
                                    lambda t: t.replace(".", ""), lambda t: "", lambda t: "not.base64!", lambda t: t + t])
def test_a_forged_or_mangled_token_names_no_question(mangle):
    signer = Signer()
    token = signer.token(Signer.new_id(), 2e9)
    decision, why = signer.read(mangle(token), now=0)
    assert decision is None and why


def test_a_token_with_its_last_character_changed_is_refused_even_where_base64_would_decode_it_the_same():
    """The last character of 16 bytes in base64 carries 4 spare bits: 'AA' and 'AB' decoded to the same MAC, so one link
    had several spellings (and a mangling test passed or failed by chance)."""
    signer = Signer()
    token = signer.token(Signer.new_id(), None)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    assert all(signer.read(token[:-1] + c, now=0)[0] is None for c in alphabet if c != token[-1])


def test_a_token_expires_at_its_time_and_says_so():
    signer = Signer()
    decision = Signer.new_id()
    token = signer.token(decision, 1000.0)
    assert signer.read(token, now=999.0) == (decision, "")
    assert signer.read(token, now=1000.0) == (decision, "expired")


def test_the_board_tells_a_wrong_token_an_expired_one_and_an_answered_one_apart():
    wall = {"now": 1000.0}
    board = Board(Signer(), lambda: wall["now"])
    p = Pending("ab" * 12, one(), asked_at=5.0)
    token = board.post(p, expires_in=60)
    assert board.find(token) == (p, None)
    assert board.find(token[:-2] + "xx")[1].status == FORBIDDEN
    wall["now"] += 61
    assert board.find(token)[1].status == GONE and "expired" in board.find(token)[1].message
    p.accept(Offer("terminal", "y", at=7.5))
    assert board.find(token) == (p, None)  # answered: found, so that a late answer hears who answered
    assert p.late(8.0).status == TAKEN and p.late(8.0).message == "already answered at the terminal, 2.5 s after it was asked"


# -- the race ----------------------------------------------------------------------------------------------------------
def answer_all(p: Pending, check) -> list[Offer]:
    """The asking thread, as humans.py runs it: offers in order, each checked; the first that passes wins."""
    taken = []
    while not p.closed.is_set():
        offer = p.next_offer(5.0)
        if offer is None:
            break
        if check(offer.text):
            p.refuse(offer, check(offer.text))
        elif p.accept(offer):
            taken.append(offer)
    return taken


def test_many_answers_at_once_one_wins_and_every_other_hears_who():
    p = Pending("cd" * 12, one(), asked_at=0.0)
    late = []
    p.on_late = late.append
    start = threading.Barrier(9)
    results: dict[str, object] = {}

    def offer(i: int) -> None:
        start.wait()
        results[f"c{i}"] = p.offer(Offer("page" if i % 2 else "terminal", f"answer {i}", who=f"10.0.0.{i}", at=1.0)).wait()

    threads = [threading.Thread(target=offer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    start.wait()
    taken = answer_all(p, lambda text: "")
    for t in threads:
        t.join(5)
    assert len(taken) == 1 and p.winner is taken[0]
    statuses = sorted(r.status for r in results.values())
    assert statuses == [ACCEPTED] + [TAKEN] * 7
    assert all(p.winner.channel in r.message for r in results.values() if r.status == TAKEN)
    assert len(late) == 7  # every loser is recorded (humans.py writes them down)


def test_a_refused_answer_leaves_the_question_open_for_the_next():
    p = Pending("ef" * 12, one(), asked_at=0.0)
    bad = p.offer(Offer("page", "rm -rf /", at=1.0))
    good = p.offer(Offer("terminal", "n", at=2.0))
    taken = answer_all(p, lambda text: "the reply was denied by policy rule 'rm-rf'" if "rm -rf" in text else "")
    assert bad.wait().status == REFUSED and "rm-rf" in bad.wait().message
    assert good.wait().status == ACCEPTED and [o.text for o in taken] == ["n"]


def test_an_answer_after_the_question_was_withdrawn_hears_why_and_wakes_nobody_twice():
    p = Pending("01" * 12, one(), asked_at=0.0)
    p.close("step 1 ended: timeout after 30s (--timeout)")
    r = p.offer(Offer("page", "y", at=3.0)).wait(0.1)
    assert r.status == GONE and "step 1 ended" in r.message
    assert p.next_offer(0.1) is None  # the asking thread woke to None, once
    assert not p.accept(Offer("terminal", "y"))  # a check that finished after the close takes nothing


# -- what is shown -----------------------------------------------------------------------------------------------------
def test_a_question_is_shown_redacted_with_its_screen_options_and_own_no():
    q = Question(kind=Kind.PERMISSION.value, text="Permission for edit: Write a.py", key="k", source="acp.permission",
                 action="--- a.py\n+password = 'hunter2'", approval=True, live=("Permission for edit: Write a.py",),
                 choices=(Choice("allow", "Allow", kind="allow_once"), Choice("reject", "Reject", kind="reject_once"),
                          Choice("x", "Type something", meta=True)))
    a = asked(q, "no rule matches", step=1, steps=1, step_name="agent", program="gemini --acp", governing_prompt="",
              redact=lambda s: s.replace("hunter2", "[REDACTED]"))
    assert a.choices == ("Allow", "Reject") and a.no == "Reject" and "[REDACTED]" in a.action and "hunter2" not in a.action
    page = html.question_page(a)
    assert 'value="Allow"' in page and "password = &#x27;[REDACTED]&#x27;" in page and "<script" not in page


def test_the_page_escapes_what_the_program_shows():
    a = one(shown='<img src=x onerror=alert(1)> "quoted" & more')
    page = html.question_page(a)
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page


def test_a_secret_gets_a_password_field_and_an_instruction_a_text_area():
    secret = asked(Question(kind="input", text="Password:", key="k", source="r", secret=True), "why", step=1, steps=1,
                   step_name="s", program="p", governing_prompt="", redact=str)
    assert 'type="password"' in html.question_page(secret)
    turn = asked(Question(kind=Kind.TURN_END.value, text="I need the database URL.", key="k", source="acp.turn_end"), "blocked",
                 step=1, steps=1, step_name="s", program="p", governing_prompt="", redact=str)
    assert "<textarea" in html.question_page(turn) and turn.no is None  # no safe answer to a turn end


# -- where the page listens, and who may ask it --------------------------------------------------------------------------
def test_listen_addresses_parse_and_bad_ones_are_one_clear_error():
    assert parse_listen("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert parse_listen("[::1]:0") == ("::1", 0)
    assert parse_listen("box.tailnet.ts.net:80") == ("box.tailnet.ts.net", 80)
    for bad in ("8765", "host:", ":80", "host:99999", "host:http"):
        with pytest.raises(BadInput, match="HOST:PORT"):
            parse_listen(bad)
    assert is_loopback("127.0.0.2") and is_loopback("::1") and not is_loopback("0.0.0.0") and not is_loopback("box")


def test_the_host_header_is_this_servers_name_or_an_address_never_another_name():
    hosts = Hosts("box.lan", 8765)
    for ok in ("box.lan:8765", "BOX.LAN:8765", "127.0.0.1:8765", "localhost:8765", "192.168.1.20:8765", "[::1]:8765", "[fe80::1]:8765"):
        assert hosts.allowed(ok), ok
    for bad in ("evil.example:8765", "box.lan.evil.example:8765", "box.lan:8766", "box.lan", "", None, "127.0.0.1.nip.io:8765"):
        assert not hosts.allowed(bad), bad


def test_the_options_are_checked_before_anything_runs():
    with pytest.raises(BadInput, match="--human-timeout"):
        configure(terminal=False, notify=[], listen=None, timeout=None, on_timeout="no")
    with pytest.raises(BadInput, match="exit, no"):
        configure(terminal=False, notify=[], listen=None, timeout=5.0, on_timeout="yes")
    with pytest.raises(BadInput, match="Apprise knows"):
        configure(terminal=False, notify=["nosuchservice://x"], listen=None, timeout=None, on_timeout="exit")
    plain = configure(terminal=True, notify=[], listen=None, timeout=None, on_timeout="exit")
    assert plain.sock is None and plain.reachable  # no page without --listen or --notify
    dry = configure(terminal=False, notify=["json://127.0.0.1:9/"], listen=None, timeout=None, on_timeout="exit", dry_run=True)
    assert dry.sock is None and not dry.reachable


def test_a_port_in_use_is_one_clear_error():
    first = configure(terminal=False, notify=[], listen="127.0.0.1:0", timeout=None, on_timeout="exit")
    try:
        port = first.sock.getsockname()[1]
        first.sock.listen()
        with pytest.raises(BadInput, match=f"--listen 127.0.0.1:{port}: cannot listen there"):
            configure(terminal=False, notify=[], listen=f"127.0.0.1:{port}", timeout=None, on_timeout="exit")
    finally:
        first.sock.close()


# -- the terminal's side of it (ui.py) ---------------------------------------------------------------------------------
def test_the_terminal_shows_the_question_the_link_and_what_became_of_it_even_with_quiet():
    import io

    from rich.console import Console

    from cursorpilot.ui import ConsoleSink

    out = io.StringIO()
    sink = ConsoleSink(Console(file=out, width=200, force_terminal=False), quiet=True)
    q = Question(kind=Kind.MENU.value, text="Deploy where?", key="k", source="r",
                 choices=(Choice("0", "staging"), Choice("1", "production")))
    a = asked(q, "no rule matches this prompt", step=1, steps=1, step_name="s", program="p", governing_prompt="", redact=str)
    sink.ask_human(a, link="http://127.0.0.1:8765/d/tok", qr=True, typed_here=True)
    sink.note("answered on the page (10.0.0.7) after 3.0s")
    shown = out.getvalue()
    assert "cursor-pilot needs you (no rule matches this prompt)" in shown and "options: staging · production" in shown
    assert "answer on the decision page: http://127.0.0.1:8765/d/tok" in shown and "▀" not in shown  # no QR off a terminal
    assert "> \nanswered on the page (10.0.0.7) after 3.0s" in shown  # said on a line of its own, despite --quiet
    sink.note("a note nobody waits for")
    assert "a note nobody waits for" not in out.getvalue()  # --quiet as before


def test_a_qr_code_of_the_link_is_drawn_on_a_terminal():
    import io

    from rich.console import Console

    from cursorpilot.ui import ConsoleSink

    out = io.StringIO()
    sink = ConsoleSink(Console(file=out, width=200, force_terminal=True), mirror=False)
    sink.ask_human(one(), link="http://192.168.1.20:8765/d/tok", qr=True)
    assert "▀" in out.getvalue() or "▄" in out.getvalue()
