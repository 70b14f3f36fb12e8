"""cursor-pilot sim [--record FILE] {cursor|line|menu|acp} SCENARIO [TASK...] (also: python -m cursorpilot.sim)"""

from __future__ import annotations

import argparse
import os
import sys

from cursorpilot.sim.common import SCENARIOS, Recorder, load_scenario


def scenarios_help() -> str:
    """The bundled scenarios by simulator, each with its first comment line: --help says what there is to run."""
    from cursorpilot.resources import summary

    groups: dict[str, list[str]] = {}
    for path in sorted(SCENARIOS.glob("*.yaml")):
        kind = path.stem.split("-")[0] if path.stem.split("-")[0] in ("acp", "line", "menu") else "cursor"
        groups.setdefault(kind, []).append(f"  {path.stem:24} {summary(path, 90)}")
    return "\n".join(f"{kind} scenarios:\n" + "\n".join(rows) for kind, rows in groups.items())


def main(argv: list[str] | None = None, prog: str = "python -m cursorpilot.sim") -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["cursor"] and len(argv) > 1 and ({"-p", "--print"} & set(argv[2:argv.index("--") if "--" in argv else len(argv)])):
        return print_mode(argv[1], argv[2:])
    ap = argparse.ArgumentParser(prog=prog, description="Simulated programs to drive: the Cursor CLI (cursor), a line-mode "
                                 "program (line), an Ink-style select (menu), an ACP agent (acp).",
                                 epilog=scenarios_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["cursor", "line", "menu", "acp"])
    ap.add_argument("--record", default=os.environ.get("CURSORPILOT_SIM_RECORD"))
    ap.add_argument("--version", action="store_true")
    ap.add_argument("scenario", nargs="?", default="demo")
    ap.add_argument("task", nargs="*")
    args = ap.parse_intermixed_args(argv)  # --record may come after the scenario
    if args.version:
        print("2026.04.17-787b533 (cursor-pilot simulator)")
        return 0
    scenario = load_scenario(args.scenario)
    record = Recorder(args.record)
    record("start", kind=args.kind, scenario=args.scenario, task=" ".join(args.task))
    if args.kind == "cursor":
        from cursorpilot.sim.cursor import main as run
        return run(scenario, " ".join(args.task), record)
    if args.kind == "acp":
        from cursorpilot.sim.acp import main as run_acp

        return run_acp(scenario, record)
    if args.kind == "menu":
        from cursorpilot.sim.menu import main as run_menu

        return run_menu(scenario, record)
    from cursorpilot.sim.line import main as run_line
    try:
        return run_line(scenario, record)
    except KeyboardInterrupt:
        return 130


def print_mode(scenario_name: str, rest: list[str]) -> int:
    """`cursor SCENARIO -p --output-format stream-json ... [-- PROMPT]`: the Cursor CLI's print mode (sim/cursor_print.py)."""
    from cursorpilot.sim.cursor_print import main as run_print

    record_path = os.environ.get("CURSORPILOT_SIM_RECORD")
    if "--record" in rest[: rest.index("--") if "--" in rest else len(rest)]:
        i = rest.index("--record")
        record_path, rest = rest[i + 1], rest[:i] + rest[i + 2:]
    record = Recorder(record_path)
    record("start", kind="cursor-print", scenario=scenario_name)
    return run_print(load_scenario(scenario_name), rest, record)


if __name__ == "__main__":
    sys.exit(main())
