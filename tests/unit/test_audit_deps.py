"""The dependency audit of `make lint` (lint/audit_deps.py): its offline answer flags
known-vulnerable releases, and it never passes because nothing was checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from lint import audit_deps


def test_offline_flags_known_vulnerable_releases() -> None:
    findings, source = audit_deps.offline({"setuptools": "65.5.0", "urllib3": "1.18"})
    ids = {(name, ident) for name, _, ident in findings}
    assert ("setuptools", "PYSEC-2022-43012") in ids  # what a fresh venv used to carry
    assert ("urllib3", "PYSEC-2017-98") in ids
    assert "pypa/advisory-database" in source


def test_offline_passes_fixed_releases() -> None:
    findings, _ = audit_deps.offline({"setuptools": "80.9.0", "urllib3": "2.5.0"})
    assert findings == []


def test_the_installed_set_has_no_open_finding() -> None:
    findings, _ = audit_deps.offline(audit_deps.installed())
    accepted = audit_deps.exceptions()
    assert [f for f in findings if (f[2], f[0]) not in accepted] == []


def test_nothing_checked_is_a_failure(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(audit_deps, "online", lambda packages: None)
    monkeypatch.setattr(audit_deps, "SNAPSHOT", tmp_path / "absent.json")
    assert audit_deps.main([]) == 1


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
