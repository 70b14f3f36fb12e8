"""The session recording: session.raw holds every byte; session.cast replays the same text with the right times."""

import codecs
import json
import random

from cursorpilot.clock import FakeClock
from cursorpilot.recording import CAST_BATCH_S, SessionRecorder


def record(tmp_path, chunks, gap=0.001):
    clock = FakeClock()
    rec = SessionRecorder(tmp_path, clock, 80, 24, ["prog"])
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    for chunk in chunks:
        rec.output(chunk, decoder.decode(chunk))
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
