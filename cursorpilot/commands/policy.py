"""`cursor-pilot policy`: the deny policy a run would weigh a yes by, printed for a person to read, and written to a file
they can correct and pin (`run --policy FILE`). The governing prompt (and a plan's prompt) compiled as a run compiles
it (a model where one is chosen, the lexical reader without one); the user's rules that grant an act (only a rule whose
own pattern names the act does); the plan's `allow:`."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cursorpilot.commands.runargs import RunArgs


def show(args: RunArgs, as_json: bool, out: Path | None) -> int:
    from cursorpilot.commands.run import _answerer, load_governing_prompt
    from cursorpilot.decide import policyfile
    from cursorpilot.decide.compiled import BY_RULE
    from cursorpilot.decide.ruling import rule_names
    from cursorpilot.plan import load_plan
    from cursorpilot.providers.rules import parse_answer, spelled
    from cursorpilot.records.redact import Redactor

    plan = load_plan(args.plan) if args.plan else None
    governing = "\n\n".join(p for p in (load_governing_prompt(args.prompt), plan.prompt if plan else None) if p)
    answers = [parse_answer(a, i + 1) for i, a in enumerate(args.answer or [])]
    provider, entries, read = _answerer(args, answers, interactive_steps=True)
    policy = policyfile.compile_now(governing, provider, Redactor(env=dict(os.environ)).text)
    rules = [*answers, *read, *(plan.answers if plan else [])]
    named = [(e.id or f"rule {n}", e.match, sorted(BY_RULE[a] for a in rule_names(tuple(spelled(e.match)), frozenset(BY_RULE))))
             for n, e in enumerate(rules, 1)]
    allow = sorted(plan.allow) if plan else []
    if out is not None:
        out.write_text(policyfile.dump(policy, governing))
    if as_json:
        print(json.dumps({"source": policy.source, **policy.data(), "dropped": list(policy.dropped),
                          "rules": [{"rule": r, "match": m, "grants": acts} for r, m, acts in named], "allow": allow}, indent=1))
        return 0
    print("\n".join(policy.lines()))
    for r, m, acts in named:
        print(f"rule {r} ({m!r}): " + (f"grants {', '.join(acts)} where it answers" if acts else "names no act: grants nothing"))
    if plan is not None:
        print(f"plan allow: {', '.join(allow) if allow else 'none'} (lifts those deny rules, and the hard floor where it names rm_outside)")
    if out is not None:
        print(f"written to {out}: correct it, then pin it with cursor-pilot run --policy {out} ...")
    return 0
