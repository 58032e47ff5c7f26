"""The lakehouse's laws on a fixed random history, and on every history the soak saved.

`make soak` (tests/simulation/soak.py) draws many random histories; this is what the
suite keeps of it: one history of a fixed seed, and every minimal history a soak found
breaking a law (tests/simulation/regressions/), each replayed step by step with every
law checked after every step (tests/simulation/world.py). They run on the lakehouse
the suites before them built, on subjects and files of their own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dbt_harness import DbtProject, build_once
from tests.simulation.history import generate
from tests.simulation.soak import REGRESSIONS, Soak

pytestmark = pytest.mark.functional

# 10 steps: a file in a subfolder, a build, a backfill, an erasure crashed after
# silver and run again, bronze restored with cascade to before it (the subject must be
# erased again: the restore brings its rows back), same-second and late events, a
# build. No purge (its VACUUM at 0 hours would take the later suites' history) and no
# compliance suite (the suites before it leave what they test on the lakehouse); the
# soak runs both.
SEED, STEPS = 1218, 9


@pytest.fixture(scope="module")
def soak(dbt: DbtProject, spark) -> Soak:
    build_once(dbt, spark)
    # histories numbered from 1: subjects P701..., files sim0001-... (a session's lakehouse is its own)
    return Soak(dbt, spark)


def test_a_random_history_keeps_every_law(soak: Soak) -> None:
    found = soak.run(generate(SEED, STEPS, comply=False))
    assert found is None, found


@pytest.mark.parametrize(
    "saved", sorted(REGRESSIONS.glob("*.json")), ids=lambda path: Path(path).stem
)
def test_a_saved_history_keeps_every_law(soak: Soak, saved: Path) -> None:
    found = soak.run(json.loads(saved.read_text())["history"])
    assert found is None, found
