"""The erasure request's states are declared once (macros/utils/request_states/) and
read alike by the dbt operations and the Python jobs (no JVM)."""

from __future__ import annotations

import re

import pytest

from python_jobs.request_states import is_subject_id, request_states, status_in, subject_id_pattern
from tests.dbt_harness import ROOT
from tests.jinja_harness import Jinja


def test_the_jobs_and_the_operations_read_the_same_states(jinja: Jinja) -> None:
    for group in ("open", "unfinished", "begun", "fulfilled"):
        rendered = jinja.compile_inline(f"{{{{ gdpr_lakehouse.request_status_in('{group}') }}}}")
        assert rendered == status_in(group)
    states = request_states()
    assert set(states["open"]) < set(states["unfinished"]) <= set(states["states"])
    assert set(states["fulfilled"]).isdisjoint(states["unfinished"])
    assert set(states["open"]) | {"held"} == set(states["unfinished"])
    assert set(states["begun"]) < set(states["open"])


def test_an_unknown_group_is_refused(jinja: Jinja) -> None:
    success, errors = jinja.compile_errors(
        "{{ gdpr_lakehouse.request_status_in('closed') }}",
    )
    assert not success
    assert "no group closed; groups: open, unfinished, begun, fulfilled" in errors


@pytest.mark.parametrize("folder", ["macros", "python_jobs"])
def test_no_other_file_spells_out_a_group_of_states(folder: str) -> None:
    # a list of two or more request states written out, e.g. ('pending', 'erasing', 'failed')
    states = "|".join(request_states()["states"])
    written = re.compile(rf"""\(\s*['"]({states})['"]\s*,\s*['"]({states})['"]""")
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in sorted((ROOT / folder).rglob("*.*"))
        if path.suffix in (".sql", ".py") and "request_states" not in path.parent.parts
        for line in path.read_text().splitlines()
        # the evidence rows have states of their own (erasing, erased, absent, purged)
        if "evidence.status" not in line
        for match in written.finditer(line)
    ]
    assert found == []


def test_the_scan_and_the_operations_accept_the_same_subject_ids(
    jinja: Jinja, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered = jinja.compile_inline("{{ gdpr_lakehouse.default_subject_id_pattern() }}")
    assert subject_id_pattern().pattern == rendered
    assert is_subject_id("P0000001")
    for refused in ("__tombstone__", " P1", "-P1", "P1;", "x" * 65, None):
        assert not is_subject_id(refused)
    # an adopter's own pattern (its dbt_project.yml vars) holds for the jobs too
    monkeypatch.setattr(
        "python_jobs.request_states.project_vars",
        lambda: {"subject_id_pattern": "^[a-z]+@[a-z.]+$"},
    )
    assert is_subject_id("ada@example.org")
    assert not is_subject_id("P0000001")
