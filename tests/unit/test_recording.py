"""The session recording: session.raw holds every byte; session.cast replays the same text with the right times."""

import json
import random

from cursorpilot.clock import FakeClock
from cursorpilot.records.recording import CAST_BATCH_S, CAST_MAX_LAG, CAST_QUIET_S, CAST_SLICE_BYTES, SessionRecorder


def record(tmp_path, chunks, gap=0.001):
    clock = FakeClock()
    rec = SessionRecorder(tmp_path, clock, 80, 24, ["prog"])
    for chunk in chunks:
        rec.output(chunk)
        clock.advance(gap)
    rec.input(b"y")
    rec.close()
    lines = (tmp_path / "session.cast").read_text().splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:]]


def test_cast_text_equals_the_bytes_whatever_they_hold(tmp_path):
    rnd = random.Random(3)
    pieces = [b"plain line\r\n", b'quote " and \\ backslash\r\n', b"\x1b[31mred\x1b[0m", b"tab\there", "é界✓".encode(), b"\x07", b"\r"]
    data = b"".join(rnd.choice(pieces) for _ in range(3000))
    cuts = sorted(rnd.sample(range(1, len(data)), 40))
    chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
    header, events = record(tmp_path, chunks)
    assert header["version"] == 2 and header["width"] == 80
    out = "".join(e[2] for e in events if e[1] == "o")
    assert out == data.decode("utf-8", errors="replace")
    assert (tmp_path / "session.raw").read_bytes() == data
    assert events[-1][1:] == ["i", "y"]


def test_streaming_output_is_batched_but_keeps_its_first_byte_time(tmp_path):
    chunks = [b"line %d\r\n" % i for i in range(100)]
    _, events = record(tmp_path, chunks, gap=CAST_BATCH_S / 4)
    outputs = [e for e in events if e[1] == "o"]
    assert 15 <= len(outputs) <= 30  # about one event per CAST_BATCH_S, not one per read
    assert outputs[0][0] == 0.0 and "".join(e[2] for e in outputs) == b"".join(chunks).decode()
    times = [e[0] for e in events]
    assert times == sorted(times)


def cast_lines(tmp_path):
    return [json.loads(line) for line in (tmp_path / "session.cast").read_text().splitlines()[1:]]


def test_streaming_output_waits_for_a_pause_before_it_goes_into_the_cast(tmp_path):
    clock = FakeClock()
    rec = SessionRecorder(tmp_path, clock, 80, 24, ["prog"])
    for i in range(50):
        rec.output(b"line %d\r\n" % i)
        rec.idle()  # reads keep finding output: nothing is converted yet
        clock.advance(CAST_QUIET_S / 2)
    assert cast_lines(tmp_path) == [] and rec.due is not None
    assert (tmp_path / "session.raw").read_bytes().startswith(b"line 0\r\n")  # the bytes themselves are on disk
    clock.advance(2 * CAST_QUIET_S)
    rec.idle()
    assert "".join(e[2] for e in cast_lines(tmp_path)) == "".join(f"line {i}\r\n" for i in range(50))
    assert rec.due is None
    rec.close()


def test_a_catch_up_converts_one_slice_at_a_time(tmp_path):
    clock = FakeClock()
    rec = SessionRecorder(tmp_path, clock, 80, 24, ["prog"])
    block = b"x" * 99 + b"\n"
    for _ in range(3 * CAST_SLICE_BYTES // (64 * 1024)):
        rec.output(block * (64 * 1024 // 100))
        clock.advance(CAST_BATCH_S)
    clock.advance(2 * CAST_QUIET_S)
    sizes = []
    for _ in range(100):  # each idle() writes one slice; a recorder that writes none fails below, not by hanging
        if rec.due is None:
            break
        rec.idle()
        sizes.append(sum(len(e[2]) for e in cast_lines(tmp_path)))
    assert len(sizes) >= 3 and all(b - a <= CAST_SLICE_BYTES for a, b in zip([0, *sizes], sizes))
    assert sizes[-1] == rec.bytes_out
    rec.close()


def test_endless_streaming_converts_anyway_so_memory_stays_bounded(tmp_path):
    clock = FakeClock()
    rec = SessionRecorder(tmp_path, clock, 80, 24, ["prog"])
    for i in range(CAST_MAX_LAG * 2):
        rec.output(b"%d\r\n" % i)
        clock.advance(2 * CAST_BATCH_S)  # every read starts a new event, and no read ever finds nothing (no idle())
    assert len(rec._events) <= CAST_MAX_LAG
    assert cast_lines(tmp_path)  # the oldest events went in while output streamed
    rec.close()
    assert "".join(e[2] for e in cast_lines(tmp_path)) == "".join(f"{i}\r\n" for i in range(CAST_MAX_LAG * 2))


def test_a_recording_left_unclosed_is_still_a_valid_cast(tmp_path):
    clock = FakeClock()
    rec = SessionRecorder(tmp_path, clock, 80, 24, ["prog"])
    rec.output(b"before the pause\r\n")
    clock.advance(2 * CAST_QUIET_S)
    rec.idle()
    rec.output(b"still streaming when killed\r\n")
    # no close(): the process died here
    events = cast_lines(tmp_path)
    assert [e[2] for e in events] == ["before the pause\r\n"]
