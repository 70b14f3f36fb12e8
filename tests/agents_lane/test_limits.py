"""The real Claude Code, Codex and Gemini CLI hit their usage limits offline, as their vendors' APIs answer them (the
status, headers and body found by trying each CLI: tests/agents_lane/refresh_captures.py has the same ones), and the run
waits, continues the same session and completes; the report shows the wait. Over ACP and in print mode too."""

from __future__ import annotations

import json
import time

import pytest

GOVERNING = "Work only inside the project."
AFTER = {"text": "Hello after the limit."}
# Claude Code shows its plan's limits ("You've hit your 5-hour limit · resets 1:06am") only to a subscription's token
SUBSCRIPTION = {"CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-" + "offline0fake0token0for0tests0" * 2, "ANTHROPIC_API_KEY": None}


def claude_limit(reset_in: float, for_seconds: float) -> dict:
    return {"error": {"type": "error", "error": {"type": "rate_limit_error", "message": "Rate limited"}}, "status": 429,
            "headers": {"anthropic-ratelimit-unified-status": "rejected", "anthropic-ratelimit-unified-reset": str(int(time.time() + reset_in)),
                        "anthropic-ratelimit-unified-representative-claim": "five_hour", "x-should-retry": "false"},
            "for_seconds": for_seconds}


def codex_limit(reset_in: float, for_seconds: float) -> dict:
    return {"error": {"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached", "plan_type": "plus",
                                "resets_at": int(time.time() + reset_in)}}, "status": 429, "for_seconds": for_seconds}


GEMINI_DAILY = {"error": {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "Quota exceeded.", "details": [
    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel"}]}]}},
    "status": 429, "for_seconds": 5}


def report_rows(r) -> list[dict]:
    return json.loads((r.log / "report.json").read_text())["ledger"]


def said_again(r, words: str) -> bool:
    """The request that followed the limit carried the conversation before it: the same session went on."""
    bodies = [json.dumps(q.get("body")) for q in r.requests if q.get("kind") == "main" and not q.get("error")]
    return any(words in b for b in bodies)


def check_waited(r, rule_id: str, read: bool):
    assert r.code == 0 and r.health["done"], r.explain()
    (hit,) = r.of("limit_hit")
    assert hit["rule_id"] == rule_id and hit["action"] == "wait" and (hit["reset"] is not None) == read, hit
    (waited,) = r.of("limit_waited")
    assert waited["how"] in ("continued", "went_on") and waited["waited_s"] > 0
    assert "usage limits waited out: 1" in r.stdout  # said on the console (--quiet: in its summary)
    rows = [row for row in report_rows(r) if row["kind"] == "usage_limit"]
    assert rows and "usage limit" in rows[0]["why"] and "waited" in rows[-1]["why"]
    return hit, waited


@pytest.mark.timeout(400)
def test_claude_code_at_its_plans_limit_waits_for_the_reset_it_shows_and_the_session_continues(agent):
    r = agent("claude", [claude_limit(5, 8), AFTER], "--prompt", GOVERNING, "--report", args=("say hello",), env=SUBSCRIPTION,
              timeout="300s")
    hit, _ = check_waited(r, "claude.usage_limit", read=True)
    assert "resets" in hit["phrase"] or "Continuing automatically" in hit["phrase"]
    assert said_again(r, "say hello")


@pytest.mark.timeout(400)
def test_codex_at_its_usage_limit_waits_for_the_reset_it_shows_and_the_session_continues(agent):
    r = agent("codex", [codex_limit(5, 8), AFTER], "--prompt", GOVERNING, "--report", args=("say hello",), timeout="300s")
    hit, waited = check_waited(r, "codex.usage_limit", read=True)
    assert hit["phrase"].startswith("try again at") and waited == {**waited, "how": "continued", "sent": "continue"}
    assert said_again(r, "say hello")


@pytest.mark.timeout(400)
def test_gemini_cli_at_its_daily_quota_with_no_reset_backs_off_then_keeps_trying(agent):
    r = agent("gemini", [GEMINI_DAILY, AFTER], "--prompt", GOVERNING, "--report", args=("-i", "say hello"), timeout="300s")
    hit, waited = check_waited(r, "gemini.usage_limit", read=False)
    assert hit["wait_s"] == 30.0 and waited["sent"] == "Keep trying"
    assert said_again(r, "say hello")


@pytest.mark.timeout(400)
def test_gemini_over_acp_answers_its_prompt_with_the_limit_and_the_same_session_is_prompted_again(agent):
    r = agent("gemini", [GEMINI_DAILY, AFTER], "--acp", "--task", "say hello", "--prompt", GOVERNING, "--report", args=("--acp",),
              timeout="300s")
    hit, waited = check_waited(r, "acp.limit", read=False)
    assert "daily quota" in hit["words"] and waited["sent"] == "say hello"  # the prompt it refused, sent again
    assert len({s["session_id"] for s in r.of("acp_session")}) == 1 and said_again(r, "say hello")


@pytest.mark.timeout(400)
def test_claude_print_mode_reports_its_exact_reset_and_the_next_turn_resumes_the_session(agent):
    r = agent("claude", [claude_limit(10, 4), AFTER], "--headless", "--task", "say hello", "--prompt", GOVERNING, "--report",
              env=SUBSCRIPTION, timeout="300s")
    hit, waited = check_waited(r, "headless.limit", read=True)
    assert hit["wait_s"] < 20 and waited["sent"] == "continue"
    started = r.of("program_started")
    assert len(started) == 2 and started[1]["command"][started[1]["command"].index("--resume") + 1] == r.of("headless_session")[0]["session_id"]
