"""A person reached by a notice: how long from a question no rule knows to the notice, and from the answer posted on
the decision page to the first key the program gets; and what `--notify` costs a run that asks nobody.

A webhook on 127.0.0.1 receives Apprise's `json://` notice and posts the answer to the page's link at once (a script
answering, as docs/human.md describes); the program is `bash read`. Each run is a whole `cursor-pilot run` process.

    python bench/human.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from benchlib import Report, measure, pilot, records, scratch, show_failure

PROGRAM = ["bash", "-c", 'read -p "Release name: " a; test "$a" = v1.2']


class Hook:
    """The webhook: each notice's link is answered `v1.2` on its own thread; the POST's round trip is kept."""

    def __init__(self):
        self.round_trips: list[float] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                self.send_response(200)
                self.end_headers()
                threading.Thread(target=outer.answer, args=(re.search(r"http://\S+", body["message"]).group(0),)).start()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"json://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, link: str) -> None:
        start = time.perf_counter()
        urllib.request.urlopen(urllib.request.Request(link, data=b"answer=v1.2"), timeout=30).read()
        self.round_trips.append((time.perf_counter() - start) * 1000)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    report = Report("human")
    hook = Hook()
    notice, typed, codes = [], [], []
    with scratch("human") as work:
        for i in range(args.runs):
            log = work / f"log{i}"
            m = measure([*pilot(), "run", "--quiet", "--answer", "x=y", "--notify", hook.url, "--log", str(log), "--", *PROGRAM], cwd=work)
            show_failure(m)
            codes.append(m.rc)
            rec = records(log)
            at = {r["type"]: r["mono"] for r in rec}
            first_key = next((r["mono"] for r in rec if r["type"] == "keys_sent"), None)
            if "human_notified" in at and first_key is not None:
                notice.append((at["human_notified"] - at["human_asked"]) * 1000)
                typed.append((first_key - at["human_answered"]) * 1000)
        plain, noticed = [], []
        for i in range(args.runs):  # what --notify costs a run that asks nobody: Apprise and aiohttp, imported
            for flags, out in (([], plain), (["--notify", hook.url], noticed)):
                shutil.rmtree(work / "quiet", ignore_errors=True)
                out.append(measure([*pilot(), "run", "--quiet", "--answer", "x=y", *flags, "--log", str(work / "quiet"), "--", "true"],
                                   cwd=work).wall_s * 1000)
    hook.server.shutdown()
    report.figure("asked -> notice sent, median", statistics.median(notice) if notice else float("nan"), "ms")
    report.figure("page POST round trip, median", statistics.median(hook.round_trips) if hook.round_trips else float("nan"), "ms")
    report.figure("answer taken -> first key typed, median", statistics.median(typed) if typed else float("nan"), "ms")
    report.figure("run of `true`, median", statistics.median(plain), "ms")
    report.figure("run of `true` with --notify, median", statistics.median(noticed), "ms")
    report.target(all(c == 0 for c in codes) and len(typed) == args.runs, "every run answered on the page, exit 0")
    report.target(bool(typed) and statistics.median(typed) <= 100, "answer taken -> first key p50 <= 100 ms")
    report.target(bool(notice) and statistics.median(notice) <= 1000, "asked -> notice p50 <= 1 s")
    return report.finish()


if __name__ == "__main__":
    raise SystemExit(main())
