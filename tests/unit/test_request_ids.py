"""Request ids have one rule, the macros request_id and request_id_pattern: the
operations make theirs with it, the jobs make and check theirs with it (through
python_jobs.request_states), and no other place writes an id's shape again."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from python_jobs import request_states
from tests.jinja_harness import Jinja

ROOT = Path(__file__).resolve().parents[2]
KINDS = {"erasure": "req", "access": "acc", "rectification": "rec", "restore": "rst"}
MOMENT = datetime(2026, 12, 6, 3, 4, 5, tzinfo=UTC)


@pytest.mark.parametrize(("kind", "prefix"), KINDS.items())
def test_an_id_made_by_the_rule_matches_its_kind_only(kind: str, prefix: str) -> None:
    made = request_states.new_request_id(kind, MOMENT)
    assert re.fullmatch(rf"{prefix}-20261206T030405-[0-9a-f]{{10}}", made), made
    assert request_states.is_request_id(made, kind)
    assert [k for k in KINDS if request_states.is_request_id(made, k)] == [kind]
    assert made != request_states.new_request_id(kind, MOMENT)  # a random salt


def test_the_operations_and_the_jobs_make_the_same_id_from_the_same_salt(jinja: Jinja) -> None:
    rendered = (
        jinja.with_vars({})
        .macros({"run_started_at": MOMENT})
        .render("{{ gdpr_lakehouse.request_id('erasure', run_started_at, 'inv:P0000001') }}")
    )
    assert (
        rendered
        == "req-20261206T030405-" + __import__("hashlib").md5(b"inv:P0000001").hexdigest()[:10]
    )


@pytest.mark.parametrize(
    "value",
    ["req-20261206T030405-0123456789x", "req-2026120T6030405-0123456789", "../req-x", "", None],
)
def test_anything_else_is_no_request_id(value: object) -> None:
    assert not request_states.is_request_id(value, "erasure")


def test_an_unknown_kind_is_a_clear_error(jinja: Jinja) -> None:
    success, errors = jinja.compile_errors("{{ gdpr_lakehouse.request_id_pattern('refund') }}")
    assert (
        not success and "no kind refund; kinds: erasure, access, rectification, restore" in errors
    )


def test_no_other_place_writes_an_id_s_shape() -> None:
    """A second copy drifted before: the jobs checked `[0-9T]{15}`, a certificate
    `[0-9]{8}T[0-9]{6}`, and each job made its ids with its own f-string."""
    shape = re.compile(
        r"""(re\.compile\(r?["']\^?|f["']|['"]\^|match\(['"]\^?)(req|acc|rec|rst)-"""
        r"""|['"](req|acc|rec|rst)-(['"]\s*~|\{\{)"""
    )
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in [*(ROOT / "python_jobs").rglob("*.py"), *(ROOT / "macros").rglob("*.sql")]
        if path.name != "request_id.sql"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if shape.search(line)
    ]
    assert found == []
