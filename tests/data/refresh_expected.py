"""Rewrite tests/data/captures/expected.yaml from what the classifier says now (review the diff before committing).

    .venv/bin/python tests/data/refresh_expected.py
"""

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cursorpilot.detect.classifier import Timing, classify  # noqa: E402
from cursorpilot.detect.profiles import load_profile  # noqa: E402
from tests.helpers import capture as capture_snapshot  # noqa: E402

CAPTURES = ROOT / "tests" / "data" / "captures"


def main() -> None:
    path = CAPTURES / "expected.yaml"
    text = path.read_text()
    expected = yaml.safe_load(text)
    profiles = {name: load_profile(name) for name in expected["default"]}
    overrides: dict = {}
    for capture in sorted(CAPTURES.glob("*.txt")):
        if capture.name.endswith((".escapes.txt", "-raw-redraw.txt")):
            continue
        for name, profile in profiles.items():
            c = classify(profile, capture_snapshot(capture), Timing(quiet_for=30))
            got = " ".join(filter(None, [c.state, c.rule_id if c.state != "unknown" else None]))
            if got != expected["default"][name]:
                overrides.setdefault(capture.name, {})[name] = got
    head = text[: text.index("default:")]
    path.write_text(head + yaml.safe_dump({"default": expected["default"], "overrides": overrides}, sort_keys=False,
                                          allow_unicode=True, width=200))


if __name__ == "__main__":
    main()
