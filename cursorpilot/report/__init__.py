"""`cursor-pilot report RUN_DIR`: one page that says what an unattended run did.

It reads what a run leaves (transcript.jsonl through cursorpilot.records.models, the session casts, prompts/, the git
snapshots) and writes report.html (self-contained: the player, its styles and the replay inlined), report.json
(the same content as data, schema in report.schema.json) and report.md (short, for a CI summary or a PR comment).
It only reads the run: a report can be made again at any time, of a finished, failed or crashed run.

The page is what people share, so all of it passes a redactor on its way out (redaction_for): the replay's output
events (the program's own bytes, which may print a token), the diffs of the files it changed, every text. It knows
the run's `--secret` values when their environment variables are still set (always with `run --report`), and the
shapes and keys any run's redactor knows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from cursorpilot import __version__
from cursorpilot.errors import BadInput
from cursorpilot.records.redact import Redactor
from cursorpilot.report.build import Builder, Caps, Draft, cut
from cursorpilot.report.cast import Joined, join
from cursorpilot.report.changes import changes
from cursorpilot.report.model import Marker, RecordStats, Replay, Report, RunInfo, Step, Verdict

OUTCOMES = {0: ("completed", "Completed"), 1: ("failed", "Failed"), 2: ("bad_input", "Bad input"),
            3: ("needs_human", "Needs a human"), 4: ("limit", "Stopped at a limit"), 130: ("interrupted", "Interrupted")}


@dataclass
class ReportFiles:
    html: Path
    json: Path
    md: Path
    report: Report


def transcript_of(target: Path) -> Path:
    """RUN_DIR, or its transcript.jsonl or manifest.json: the transcript."""
    path = target / "transcript.jsonl" if target.is_dir() else target.parent / "transcript.jsonl" if target.name == "manifest.json" else target
    if not path.is_file():
        raise BadInput(f"no transcript at {path}: give a run's folder (runs/<run-id>/)")
    return path


def build(target: Path, caps: Caps | None = None) -> tuple[Report, str]:
    """The report of a run, and the replay's asciicast to embed."""
    path = transcript_of(target)
    log_dir = path.parent
    d = Builder(log_dir, caps).run(path)
    if d.first is None:
        raise BadInput(f"{path}: no transcript record in it")
    read_prompts(d, log_dir)
    redactor = redaction_for(log_dir, d)
    joined = join(d, log_dir, redactor)
    rows = []
    for row, mono, attempt in d.rows.items():
        step = d.steps.get(row.step or 0)
        row.replay_s = joined.at(row.step, mono) if step is not None and step.attempt == attempt else None
        rows.append(row)
    turns = d.turns.items()
    for t in turns:
        t.replay_s = joined.at(t.step, d.first.mono + t.at_s)
    steps = steps_of(d)
    for s in steps:
        s.replay_start_s = joined.offsets[s.n][0] if s.n in joined.offsets else None
    report = Report(
        generator=f"cursor-pilot {__version__}", log_dir=str(log_dir.resolve()), run=_run_info(d), verdict=_verdict(d, len(steps)),
        steps=steps, turns=turns, ledger=rows, ledger_total=d.rows.total, changes=changes(d, log_dir),
        replay=_replay(joined, rows, steps), records=RecordStats(
            lines=d.stats.lines, records=d.stats.lines - d.stats.bad_lines - int(d.stats.torn_last), bad_lines=d.stats.bad_lines,
            torn_last=d.stats.torn_last, misfits=d.stats.misfits, unknown=d.stats.unknown),
        policy=(d.compiled.lines or []) if d.compiled else [], notes=_notes(d, joined), cascade=d.cascade.summary(),
    )
    return Report.model_validate(redactor.value(report.model_dump())), joined.text


def redaction_for(log_dir: Path, d: Draft) -> Redactor:
    """The run's redactor, as far as it can be made again: its --secret values (named in the manifest, read from the
    environment variables that held them, when they still do), the .env of its working directory, the keys and
    secret-named variables of this environment, the secret shapes."""
    import os

    from cursorpilot.records.manifest import read_manifest

    values: list[str] = []
    try:
        specs = read_manifest(log_dir / "manifest.json").options.get("secret") or []
    except (BadInput, OSError):
        specs = []
    for spec in specs if isinstance(specs, list) else []:
        var = str(spec).partition("=")[2]
        if os.environ.get(var):
            values.append(os.environ[var])
    return Redactor(cwd=d.started.cwd if d.started and d.started.cwd else str(log_dir), secrets=values)


def write(target: Path, out: Path | None = None, caps: Caps | None = None) -> ReportFiles:
    from cursorpilot.report.render import html, markdown

    report, cast = build(target, caps)
    out = out or transcript_of(target).parent
    out.mkdir(parents=True, exist_ok=True)
    paths = ReportFiles(out / "report.html", out / "report.json", out / "report.md", report)
    paths.json.write_text(report.model_dump_json(indent=1) + "\n", encoding="utf-8")
    paths.md.write_text(markdown(report), encoding="utf-8")
    with open(paths.html, "w", encoding="utf-8") as fh:
        for chunk in html(report, cast):
            fh.write(chunk)
    return paths


def _when(ts: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")) if ts else None
    except ValueError:
        return None


def _run_info(d: Draft) -> RunInfo:
    s = d.started
    return RunInfo(run_id=d.first.run_id if d.first else "", argv=list(s.argv or []) if s else [], plan=s.plan if s else None,
                   provider=s.provider if s else None, model=s.model if s else None, cwd=s.cwd if s else None,
                   governing_prompt=cut(s.governing_prompt or "", 20_000) or "" if s else "",
                   versions={k: (str(v) if v is not None else None) for k, v in ((s.versions or {}) if s else {}).items()},
                   resumes=d.resumes)


def _verdict(d: Draft, steps: int) -> Verdict:
    f, c = d.finished, dict(d.counts)
    if f is not None:
        outcome, headline = OUTCOMES.get(f.exit_code or 0, ("failed", f"Exit {f.exit_code}"))
        reason = f.reason or ""
        for key in ("answers", "escalations", "llm_calls", "tokens_in", "tokens_out", "tokens_cached"):
            value = (f.counters or {}).get(key)
            if isinstance(value, int):
                c[key] = max(c[key], value)
    else:
        last = d.last
        outcome, headline = "crashed", "Did not finish"
        reason = (f"the transcript ends without run_finished: the pilot was killed or crashed, or is still running "
                  f"(last record: {last.type} at {last.ts})" if last else "empty transcript")
    start, end = _when(d.first.ts if d.first else None), _when(d.last.ts if d.last else None)
    return Verdict(
        outcome=outcome, headline=headline, exit_code=f.exit_code if f else None, reason=reason, finished=f is not None,  # type: ignore[arg-type]
        steps=max(steps, len(d.started.steps or []) if d.started else 0),
        steps_completed=sum(1 for s in d.steps.values() if s.status in ("completed", "previewed")), turns=d.turns.total,
        answers=c["answers"], escalations=c["escalations"], denials=c["denials"], grants=c["grants"], waits=c["waits"], llm_calls=c["llm_calls"],
        tokens_in=c["tokens_in"], tokens_out=c["tokens_out"], tokens_cached=c["tokens_cached"],
        cost_usd=f.cost_usd if f and f.cost_usd is not None else d.cost_usd,
        wall_s=round((end - start).total_seconds(), 3) if start and end else None,
        started=d.first.ts if d.first else None, ended=d.last.ts if d.last else None,
    )


def _replay(j: Joined, rows, steps) -> Replay:
    markers = [Marker(t=s.replay_start_s, label=f"step {s.n}: {s.name}", row=None) for s in steps
               if s.replay_start_s is not None and s.n > 1]
    markers += [Marker(t=r.replay_s, label=f"#{r.n} {r.outcome}: {(r.answer or r.why or '')[:60]}", row=r.n)
                for r in rows if r.replay_s is not None]
    return Replay(available=bool(j.casts), note=j.note, cols=j.cols, rows=j.rows, duration_s=j.duration, casts=j.casts,
                  markers=sorted(markers, key=lambda m: m.t), cut=j.cut)


def _notes(d: Draft, j: Joined) -> list[str]:
    notes, st = [], d.stats
    if d.finished is None:
        notes.append("This run did not finish: its transcript has no run_finished record (the pilot was killed or crashed, "
                     "or it is still running). Everything recorded up to its last record is shown.")
    if st.torn_last:
        notes.append("The transcript's last line was torn (cut mid-write by a crash) and is left out.")
    if st.bad_lines:
        notes.append(f"{st.bad_lines} line(s) of the transcript are not records and are left out.")
    if st.misfits:
        notes.append(f"{st.misfits} record(s) do not fit their declared shape (another version wrote them): counted, not shown.")
    if st.unknown:
        notes.append("Record types this version does not know: " + ", ".join(f"{k} ({v})" for k, v in sorted(st.unknown.items())) + ".")
    if d.rows.left_out:
        notes.append(f"The ledger shows the first {d.caps.ledger_head} and the last {d.caps.ledger_tail} of {d.rows.total} decisions; "
                     f"{d.rows.left_out} in between are left out (all are in transcript.jsonl).")
    if d.turns.left_out:
        notes.append(f"The timeline shows the first {d.caps.turns} of {d.turns.total} turns.")
    if d.prompts_left_out:
        notes.append(f"{d.prompts_left_out} prompt(s) are not shown (the page's prompt budget is spent): see prompts/.")
    if j.cut:
        notes.append(j.note)
    if d.started and d.started.dry_run:
        notes.append("A dry run: nothing was typed; the ledger shows what would have been sent.")
    return notes


def steps_of(d: Draft) -> list[Step]:
    return [Step(n=s.n, name=s.name, kind=s.kind, channel=s.channel, status=s.status, exit_code=s.exit_code,  # type: ignore[arg-type]
                 reason=s.reason, command=s.command, program=s.program, last_words=s.last_words, start_s=s.start,
                 end_s=s.end, replay_start_s=None) for s in sorted(d.steps.values(), key=lambda s: s.n)]


def read_prompts(d: Draft, log_dir: Path) -> None:
    """The prompts that were sent, from prompts/step-NN/, for the rows kept, within the budget."""
    budget = d.caps.prompts_total
    for row, _, _ in d.rows.items():
        if not row.prompt_file:
            continue
        path = log_dir / row.prompt_file
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read(d.caps.prompt + 1)
        except OSError:
            continue
        if len(text) > budget:
            d.prompts_left_out += 1
            continue
        row.prompt = text if len(text) <= d.caps.prompt else text[: d.caps.prompt] + "\n[… cut: the whole prompt is in the file]"
        budget -= len(row.prompt)
        d.prompts_shown += 1
