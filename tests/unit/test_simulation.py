"""The simulation's own parts, without Spark: its generator, its shrinking, its oracle."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tests.simulation.history import generate, shrink
from tests.simulation.oracle import UNKNOWN_OP, Lakehouse

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _event(key: str | None, op: str | None, seconds: int | None, address: str) -> dict:
    return {
        "patient_id": key,
        "_op": op,
        "_source_ts": None if seconds is None else T0 + timedelta(seconds=seconds),
        "address": address,
    }


def test_a_seed_gives_the_same_history_and_another_seed_another() -> None:
    first, again, other = generate(3, 40), generate(3, 40), generate(4, 40)
    assert json.dumps(first) == json.dumps(again)
    assert json.dumps(first) != json.dumps(other)
    assert len(first) >= 40 and first[-2:] == [{"op": "build"}, {"op": "comply"}]
    assert any(step.get("full_refresh") for seed in range(20) for step in generate(seed, 40))
    ops = {step["op"] for seed in range(20) for step in generate(seed, 40)}
    every = "land build erase restore purge repair refuse savepoint release snapshot comply hold"
    assert ops == set((every + " rectify replace audit").split())
    steps = [step for seed in range(20) for step in generate(seed, 40)]
    assert any(s.get("mistyped") for s in steps) and any(s.get("by") for s in steps)
    assert any(s.get("crash") for s in steps if s["op"] in ("restore", "savepoint"))


def test_a_rectification_is_drawn_only_when_bronze_has_applied_every_landed_event() -> None:
    """python_jobs.rectify refuses (records nothing) while a landed event of the subject
    waits for a build: the history draws one only after a build, before any landing or
    restore of bronze."""
    drawn = 0
    for seed in range(60):
        stale = True
        for step in generate(seed, 40):
            if step["op"] == "build":
                stale = False
            elif (
                step["op"] in ("land", "repair", "replace")
                or step.get("model") == "bronze_patients"
            ):
                stale = True
            elif step["op"] == "rectify":
                drawn += 1
                assert not stale, (seed, step)
    assert drawn


def test_a_restore_names_a_build_the_history_made_since_its_last_purge() -> None:
    for seed in range(30):
        builds = 0
        for step in generate(seed, 40):
            if step["op"] == "build":
                builds += 1
            elif step["op"] == "purge":
                builds = 0
            elif step["op"] == "restore" and "build" in step:
                assert 0 <= step["build"] < builds, (seed, step)


def test_a_cascade_never_reaches_back_past_a_restore_of_silver_alone() -> None:
    """A cascade restores silver to where it was just before bronze's next change:
    the oracle knows it as the build's silver only if silver was not restored on its
    own since that build."""
    for seed in range(60):
        builds, silver_restored = 0, 0
        for step in generate(seed, 40):
            if step["op"] == "build":
                builds += 1
            elif step["op"] == "purge":
                builds = silver_restored = 0
            elif step["op"] == "restore" and step.get("model") != "bronze_patients":
                silver_restored = builds
            elif step["op"] == "restore" and step.get("cascade"):
                assert step["build"] >= silver_restored, (seed, step)


def test_shrinking_keeps_only_the_steps_the_failure_needs() -> None:
    history = [{"op": "land", "n": n} for n in range(20)]
    needed = {3, 11, 17}

    def fails(candidate: list[dict]) -> bool:
        return needed <= {step["n"] for step in candidate}

    assert [step["n"] for step in shrink(history, fails)] == sorted(needed)


def test_the_oracle_keeps_the_newest_event_and_never_an_erased_subject() -> None:
    lake = Lakehouse()
    lake.land("b.parquet", [_event("P1", "insert", 10, "b0"), _event("P2", "insert", 10, "b1")])
    # same second, same operation: the later file wins; an older insert after a delete
    # does not bring the key back
    lake.land("a.parquet", [_event("P1", "update", 10, "a0"), _event("P3", "delete", 9, "a1")])
    lake.land("c.parquet", [_event("P1", "update", 10, "c0"), _event("P3", "insert", 8, "c1")])
    lake.land("d.parquet", [_event(None, "insert", 1, "d0"), _event("P2", "upsert", 20, "d1")])
    lake.build()
    assert {k: e.values["address"] for k, e in lake.bronze.items()} == {"P1": "c0", "P2": "b1"}
    assert lake.rejected() == [("d.parquet", "missing key"), ("d.parquet", UNKNOWN_OP)]
    lake.erase("P2")
    lake.land("e.parquet", [_event("P2", "update", 30, "e0")])
    lake.build()
    assert set(lake.bronze) == {"P1"} and set(lake.silver) == {"P1"}
    # the erased subject's invalid event is no longer listed: its row is gone
    assert lake.rejected() == [("d.parquet", "missing key")]
    lake.purge()
    assert [r["address"] for r in lake.files["e.parquet"].rows] == []
    assert "e.parquet" in lake.files  # the file stays, with no row


def test_an_unreadable_file_waits_and_its_events_apply_once_it_is_repaired() -> None:
    lake = Lakehouse()
    lake.land("a.parquet", [_event("P1", "insert", 10, "a0")], readable=False)
    lake.build()
    assert lake.bronze == {} and lake.unreadable() == {"a.parquet"}
    lake.repair("a.parquet")
    lake.build()
    assert set(lake.bronze) == {"P1"}


def test_a_held_subject_waits_and_is_erased_by_the_first_erasure_after_the_release() -> None:
    lake = Lakehouse()
    lake.land("a.parquet", [_event("P1", "insert", 1, "a0"), _event("P2", "insert", 1, "a1")])
    lake.build()
    lake.hold("P1")
    lake.erase("P1")
    assert set(lake.bronze) == {"P1", "P2"} and lake.waiting == {"P1"}
    lake.release("P1")
    assert set(lake.bronze) == {"P1", "P2"}  # nothing runs at the release
    lake.erase("P2")
    assert lake.bronze == {} and lake.erased == {"P1", "P2"}
    lake.hold("P1")  # too late: erased
    assert lake.held == set()
