"""The dependency audit of `make lint` (lint/audit_deps.py): it says plainly when no
advisory service answered (never an old snapshot passing as an audit), and it flags a
yanked release from the index's own simple API."""

from __future__ import annotations

from pathlib import Path

import pytest

from lint import audit_deps


def _page(*files: tuple[str, object]) -> dict:
    return {"files": [{"filename": name, "yanked": yanked} for name, yanked in files]}


def test_a_release_is_yanked_only_when_every_file_of_it_is() -> None:
    page = _page(
        ("dbt_core-1.11.16-py3-none-any.whl", "broken metadata"),
        ("dbt-core-1.11.16.tar.gz", True),
        ("dbt_core-1.11.17-py3-none-any.whl", False),
        ("dbt-core-1.11.17.tar.gz", "only the sdist"),
    )
    assert audit_deps.release_yanked(page, "1.11.16") is True
    assert audit_deps.release_yanked(page, "1.11.17") is False  # its wheel stands
    assert audit_deps.release_yanked(page, "1.11.18") is None  # not on the page: unchecked
    assert audit_deps.release_yanked(page, "not a version") is None


def test_versions_are_compared_as_versions_not_as_text() -> None:
    page = _page(("pyspark-4.2.0.tar.gz", True))
    assert audit_deps.release_yanked(page, "4.2") is True
    assert audit_deps.release_yanked(page, "4.2.0.1") is None


def _offline(monkeypatch: pytest.MonkeyPatch, pages: dict[str, dict | None]) -> None:
    """No advisory service, and an index answering from `pages`."""
    monkeypatch.setattr(audit_deps, "installed", lambda: {"agate": "1.9.1", "babel": "2.17.0"})
    monkeypatch.setattr(audit_deps, "vulnerabilities", lambda packages: (None, "no service"))
    monkeypatch.setattr(audit_deps, "project_page", lambda index, name: pages.get(name))


def test_no_advisory_service_is_said_plainly_and_fails_only_when_required(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    _offline(monkeypatch, {"agate": _page(("agate-1.9.1.tar.gz", False))})
    assert audit_deps.main([]) == 0
    out = capsys.readouterr().out
    assert "vulnerabilities: NOT AUDITED" in out
    assert "1 checked" in out and "not answered for 1: babel" in out
    assert audit_deps.main(["--require"]) == 1


def test_a_yanked_release_fails_unless_accepted_with_a_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    _offline(monkeypatch, {"agate": _page(("agate-1.9.1-py2.py3-none-any.whl", True))})
    monkeypatch.setattr(audit_deps, "EXCEPTIONS", tmp_path / "absent.txt")
    assert audit_deps.main([]) == 1
    assert "agate 1.9.1: yanked (FINDING)" in capsys.readouterr().out
    listed = tmp_path / "exceptions.txt"
    listed.write_text("yanked agate pinned by dbt-core; the yank was for its metadata\n")
    monkeypatch.setattr(audit_deps, "EXCEPTIONS", listed)
    assert audit_deps.main([]) == 0


def test_an_exception_needs_a_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    listed = tmp_path / "exceptions.txt"
    listed.write_text("PYSEC-2022-43012 setuptools\n")
    monkeypatch.setattr(audit_deps, "EXCEPTIONS", listed)
    with pytest.raises(SystemExit, match="needs a reason"):
        audit_deps.exceptions()
    listed.write_text("PYSEC-2022-43012 setuptools only used to build, never at run time\n")
    assert audit_deps.exceptions() == {
        ("PYSEC-2022-43012", "setuptools"): "only used to build, never at run time"
    }
