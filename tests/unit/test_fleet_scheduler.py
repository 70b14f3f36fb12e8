"""The fleet's rules (cursorpilot/fleet/scheduler.py), driven with facts and a fake clock, in milliseconds: what starts,
what stops and why, what a task's end means, the fleet's exit code."""

from __future__ import annotations

from cursorpilot.fleet.facts import (AskedPerson, Ended, Finished, Interrupt, Lost, Post, ProgramStarted, Progressed, Questioned,
                                     RunResult, Say, Settled, Spawned, Start, Stop, TaskRow, Tick, Withdraw)
from cursorpilot.fleet.scheduler import GRACE, Scheduler


class Fleet:
    def __init__(self, n: int = 6, concurrency: int = 3, max_cost: float | None = None, rows: list[TaskRow] | None = None):
        self.s = Scheduler(rows or [TaskRow(id=f"t{i}") for i in range(1, n + 1)], concurrency, max_cost)
        self.now = 0.0
        self.effects: list = []

    def __call__(self, fact, after: float = 0.0):
        self.now += after
        out = self.s.handle(self.now, fact)
        self.effects += out
        return out

    def started(self, out=None) -> list[str]:
        return [e.task for e in (self.effects if out is None else out) if isinstance(e, Start)]

    def end(self, task: str, code: int, **kw):
        return self(Ended(task, RunResult(code, **kw)))

    def finished(self) -> Finished | None:
        return next((e for e in self.effects if isinstance(e, Finished)), None)


def test_at_most_concurrency_run_and_the_rest_start_in_the_files_order_as_tasks_end():
    f = Fleet(6, 3)
    assert f.started(f(Tick())) == ["t1", "t2", "t3"]
    assert f.started(f(Tick())) == []
    assert f.started(f.end("t2", 0)) == ["t4"]
    assert f.started(f.end("t1", 0)) == ["t5"]
    assert f.started(f.end("t3", 0)) == ["t6"]
    assert f.finished() is None


def test_a_crash_or_an_exit_3_of_one_task_never_stops_the_others():
    f = Fleet(4, 2)
    f(Tick())
    f.end("t1", -9)  # killed by a signal
    f.end("t2", 3)
    assert f.started() == ["t1", "t2", "t3", "t4"]
    assert not [e for e in f.effects if isinstance(e, Stop)]
    f.end("t3", 0)
    f.end("t4", 0)
    assert f.s.rows["t1"].status == "failed" and f.s.rows["t2"].status == "needs-person"
    assert f.finished().exit_code == 1  # a failure outranks a question


def test_the_fleets_exit_code_every_task_done_some_need_a_person_some_hit_a_limit():
    for codes, want in (((0, 0), 0), ((0, 3), 3), ((4, 0), 4), ((3, 4), 3), ((1, 3), 1), ((2, 0), 1)):
        f = Fleet(2, 2)
        f(Tick())
        for i, code in enumerate(codes):
            f.end(f"t{i + 1}", code)
        assert f.finished().exit_code == want, codes


def test_the_budget_spent_starts_no_task_and_stops_a_running_one_at_its_next_question():
    f = Fleet(4, 2, max_cost=0.10)
    f(Tick())
    f(Progressed("t1", answers=2, cost_usd=0.04))
    assert not f.s.over_budget
    out = f(Progressed("t2", answers=1, cost_usd=0.07))
    assert f.s.over_budget and any(isinstance(e, Say) and "budget" in e.text for e in out)
    assert not [e for e in f.effects if isinstance(e, Stop)]  # not at once: at the next question
    assert f.started(f.end("t1", 0)) == []  # no new task starts
    stop = [e for e in f(Questioned("t2")) if isinstance(e, Stop)]
    assert stop and stop[0].task == "t2" and not stop[0].force
    assert [e for e in f(Questioned("t2")) if isinstance(e, Stop)] == []  # asked once
    f.end("t2", 130)  # the run, interrupted, ends 130: the fleet says why, exit 4
    row = f.s.rows["t2"]
    assert (row.status, row.exit_code) == ("limit", 4) and "budget" in row.reason
    assert f.s.rows["t3"].status == "pending"
    assert f.finished().exit_code == 4 and "budget" in f.finished().reason


def test_a_question_below_the_budget_stops_nothing():
    f = Fleet(2, 2, max_cost=1.0)
    f(Tick())
    f(Progressed("t1", cost_usd=0.5))
    assert not [e for e in f(Questioned("t1")) if isinstance(e, Stop)]


def test_a_question_for_a_person_goes_to_the_inbox_and_leaves_it_when_settled_or_when_its_task_ends():
    f = Fleet(2, 2)
    f(Tick())
    out = f(AskedPerson("t1", "d1", "http://127.0.0.1:5/", "Proceed?"))
    assert Post("t1", "d1", "http://127.0.0.1:5/") in out and f.s.rows["t1"].status == "waiting"
    assert Withdraw("t1", "d1") in f(Settled("t1", "d1"))
    assert f.s.rows["t1"].status == "running"
    f(AskedPerson("t2", "d2", "http://127.0.0.1:6/"))
    assert Withdraw("t2") in f.end("t2", 3)


def test_a_worker_that_died_before_its_program_started_is_started_again_and_after_it_never():
    f = Fleet(2, 1)
    f(Tick())
    f(Spawned("t1", "10.0.0.2"))
    again = f(Lost("t1", "WorkerCrashedError"))
    assert f.started(again) == ["t1"] and f.s.rows["t1"].attempts == 2
    f(ProgramStarted("t1"))
    out = f(Lost("t1", "WorkerCrashedError"))
    assert f.started(out) == ["t2"]
    row = f.s.rows["t1"]
    assert row.status == "killed" and row.exit_code is None and "side effects" in row.reason  # fleet resume runs it again


def test_a_worker_that_keeps_dying_before_its_program_starts_is_killed_after_two_more_tries():
    f = Fleet(1, 1)
    f(Tick())
    for _ in range(2):
        assert f.started(f(Lost("t1", "node gone"))) == ["t1"]
    f(Lost("t1", "node gone"))
    assert f.s.rows["t1"].status == "killed" and f.finished().exit_code == 1
    assert "killed (fleet resume runs them again)" in f.finished().reason


def test_a_run_killed_by_a_signal_is_killed_not_failed_and_the_others_go_on():
    """The OOM killer's SIGKILL is not the task's verdict: `killed` is what `fleet resume` runs again; a run that ended
    by itself with an exit code (its own failure) keeps `failed`."""
    from cursorpilot.fleet.scheduler import FINISHED

    f = Fleet(3, 2)
    f(Tick())
    out = f(Ended("t1", RunResult(137, "its run was killed by signal 9 (SIGKILL)", signal=9)))
    assert f.s.rows["t1"].status == "killed" and f.s.rows["t1"].exit_code == 137 and f.started(out) == ["t3"]
    assert Say("t1: killed (exit 137: its run was killed by signal 9 (SIGKILL))") in out
    f.end("t2", 1)
    f.end("t3", 0)
    assert [r.status for r in f.s.rows.values()] == ["killed", "failed", "done"]
    assert "killed" not in FINISHED and "failed" in FINISHED
    assert f.finished().exit_code == 1


def test_a_killed_task_alone_is_not_a_fleet_done():
    f = Fleet(2, 2)
    f(Tick())
    f(Ended("t1", RunResult(137, signal=9)))
    f.end("t2", 0)
    assert f.finished() == Finished(1, "some tasks were killed (fleet resume runs them again): 1 done, 1 killed")


def test_a_run_killed_by_the_fleets_own_force_stop_is_interrupted():
    f = Fleet(1, 1)
    f(Tick())
    f(Interrupt(), after=1.0)
    f(Interrupt(), after=1.0)
    f(Ended("t1", RunResult(137, signal=9)))
    assert f.s.rows["t1"].status == "interrupted" and f.finished().exit_code == 130


def test_ctrl_c_stops_every_running_task_starts_none_and_forces_after_the_grace():
    f = Fleet(5, 2)
    f(Tick())
    out = f(Interrupt(), after=1.0)
    assert sorted(e.task for e in out if isinstance(e, Stop) and not e.force) == ["t1", "t2"]
    assert f.started(f.end("t1", 130)) == []
    assert not [e for e in f(Tick(), after=GRACE - 1.5) if isinstance(e, Stop)]
    forced = [e for e in f(Tick(), after=1.5) if isinstance(e, Stop)]
    assert [(e.task, e.force) for e in forced] == [("t2", True)]
    f(Lost("t2", "TaskCancelledError"))
    assert f.s.rows["t2"].status == "interrupted"
    assert f.finished().exit_code == 130
    assert [r.status for r in f.s.rows.values()] == ["interrupted", "interrupted", "pending", "pending", "pending"]


def test_a_second_ctrl_c_forces_at_once():
    f = Fleet(2, 2)
    f(Tick())
    f(Interrupt())
    forced = [e for e in f(Interrupt(force=True)) if isinstance(e, Stop) and e.force]
    assert sorted(e.task for e in forced) == ["t1", "t2"]


def test_a_task_that_finishes_as_ctrl_c_comes_keeps_its_result():
    f = Fleet(1, 1)
    f(Tick())
    f(Interrupt())
    f.end("t1", 0)
    assert f.s.rows["t1"].status == "done" and f.finished().exit_code == 130


def test_resumed_rows_that_finished_are_not_started_again():
    rows = [TaskRow(id="a", status="done", exit_code=0), TaskRow(id="b", status="failed", exit_code=1), TaskRow(id="c")]
    f = Fleet(rows=rows, concurrency=3)
    assert f.started(f(Tick())) == ["c"]
    f.end("c", 0)
    assert f.finished().exit_code == 1  # b's failure is still the fleet's


def test_an_empty_round_finishes_once():
    f = Fleet(rows=[TaskRow(id="a", status="done", exit_code=0)], concurrency=1)
    f(Tick())
    f(Tick())
    assert sum(isinstance(e, Finished) for e in f.effects) == 1 and f.finished().exit_code == 0
