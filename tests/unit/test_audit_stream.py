"""Unit layer: the audit stream's rules that need no Spark (which versions the feed still
reaches, where a checkpointed stream stands, what the command line accepts)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from python_jobs import audit_stream, report

T0 = datetime(2026, 11, 1, 12, 0, 0)


def _commit(version: int, operation: str, at: datetime, **parameters: str) -> dict:
    return {
        "version": version,
        "operation": operation,
        "timestamp": at,
        "operationParameters": parameters,
    }


def test_the_feed_is_readable_from_the_first_version_when_nothing_was_vacuumed() -> None:
    commits = [_commit(v, "WRITE", T0 + timedelta(hours=v)) for v in range(5)]
    assert audit_stream.cdf_readable_from(commits) == 0
    assert audit_stream.cdf_readable_from([]) == 0


def test_a_vacuum_makes_commits_older_than_its_cutoff_unreadable() -> None:
    commits = [_commit(v, "MERGE", T0 + timedelta(hours=v)) for v in range(6)]
    # VACUUM at T0+10h retaining 7 h: cutoff T0+3h, so versions 0-3 may have lost files
    commits.append(
        _commit(
            6, "VACUUM START", T0 + timedelta(hours=10), specifiedRetentionMillis=str(7 * 3600_000)
        )
    )
    commits.append(_commit(7, "VACUUM END", T0 + timedelta(hours=10)))
    assert audit_stream.cdf_readable_from(commits) == 4
    # the table's default retention (7 days) when none was specified: nothing lost
    commits[6] = _commit(
        6, "VACUUM START", T0 + timedelta(hours=10), defaultRetentionMillis="604800000"
    )
    assert audit_stream.cdf_readable_from(commits) == 0


def test_the_feed_cannot_start_before_the_deleted_file_retention() -> None:
    """Delta 4.1+ refuses a change feed starting at a version committed before now minus
    delta.deletedFileRetentionDuration (delta-io/delta#5022); the newest always reads."""
    commits = [_commit(v, "MERGE", T0 + timedelta(hours=v)) for v in range(5)]
    now = T0 + timedelta(hours=6, minutes=30)
    # 3 h retention: v0-v3 (T0..T0+3h) were committed before T0+3h30
    assert audit_stream.time_travel_floor(commits, timedelta(hours=3), now) == 4
    # a week reaches every version; an hour reaches none but the newest
    assert audit_stream.time_travel_floor(commits, timedelta(days=7), now) == 0
    assert audit_stream.time_travel_floor(commits, timedelta(hours=1), now) == 4
    # v2 (T0+2h) leaves a 4h35 window in 5 minutes: gone already; a 4h45 one in 15: kept
    assert audit_stream.time_travel_floor(commits, timedelta(hours=4, minutes=35), now) == 3
    assert audit_stream.time_travel_floor(commits, timedelta(hours=4, minutes=45), now) == 2
    assert audit_stream.time_travel_floor([], timedelta(hours=1), now) == 0


def test_a_history_trimmed_by_log_retention_starts_at_its_oldest_version() -> None:
    commits = [_commit(v, "WRITE", T0 + timedelta(hours=v)) for v in range(40, 45)]
    assert audit_stream.cdf_readable_from(commits) == 40


def _offset(checkpoint: Path, batch: int, version: int, index: int = -1) -> None:
    (checkpoint / "offsets").mkdir(parents=True, exist_ok=True)
    offset = {"sourceVersion": 1, "reservoirId": "x", "reservoirVersion": version, "index": index}
    (checkpoint / "offsets" / str(batch)).write_text("v1\n{}\n" + json.dumps(offset))


def test_a_batch_consumed_every_version_before_its_offset(tmp_path: Path) -> None:
    assert audit_stream.consumed_through(tmp_path, 0) is None
    assert audit_stream.checkpoint_position(tmp_path) == 0
    _offset(tmp_path, 0, 4)
    _offset(tmp_path, 1, 7)
    assert audit_stream.consumed_through(tmp_path, 0) == 3
    assert audit_stream.consumed_through(tmp_path, 1) == 6
    assert audit_stream.checkpoint_position(tmp_path) == 7


def test_a_batch_that_read_files_of_a_version_consumed_that_version(tmp_path: Path) -> None:
    """Delta's offset after a batch that read version 7 (its file 2 last) is (7, 2): the
    batch counted version 7, so the next batch starts at 8 and must not record 7 again
    as a commit with no changes. A schema-change index (-20) has read no file of 7."""
    _offset(tmp_path, 0, 4, index=0)
    _offset(tmp_path, 1, 7, index=2)
    _offset(tmp_path, 2, 9, index=-20)
    assert audit_stream.consumed_through(tmp_path, 0) == 4
    assert audit_stream.consumed_through(tmp_path, 1) == 7
    assert audit_stream.consumed_through(tmp_path, 2) == 8
    # the stream may have read 9 in part: it still needs the feed from 9 on
    assert audit_stream.checkpoint_position(tmp_path) == 9


def test_generations_are_the_from_v_folders_in_order(tmp_path: Path) -> None:
    for name in ("from-v12", "from-v3", "other", "from-vx"):
        (tmp_path / name).mkdir()
    assert audit_stream._generations(tmp_path) == [3, 12]
    assert audit_stream._generations(tmp_path / "missing") == []


def test_a_second_job_on_the_same_checkpoints_is_refused(tmp_path: Path) -> None:
    with (
        audit_stream.exclusive(tmp_path),
        pytest.raises(audit_stream.ProjectError, match="another audit_stream is running"),
        audit_stream.exclusive(tmp_path),
    ):
        pass
    with audit_stream.exclusive(tmp_path):  # released
        pass


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--once", "--follow"], "not allowed with argument"),
        (["--follow", "--interval", "0"], "--interval must be from 0.5 to 3600"),
        (["--once", "--max-files-per-trigger", "0"], "--max-files-per-trigger must be from 1"),
    ],
)
def test_bad_arguments_are_refused(
    argv: list[str], message: str, capsys: pytest.CaptureFixture
) -> None:
    with pytest.raises(SystemExit) as exit_:
        audit_stream.parse_args(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_once_is_the_default() -> None:
    assert audit_stream.parse_args([]).once
    assert not audit_stream.parse_args(["--follow"]).once


def test_the_report_refuses_a_bad_as_of_time(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit):
        report.parse_args(["--as-of", "next tuesday"])
    assert "is not a date or time" in capsys.readouterr().err
    assert report.parse_args(["--as-of", "2026-12-01T08:00+01:00"]).as_of == datetime(
        2026, 12, 1, 7, 0
    )


def test_a_stream_starts_at_the_newest_commit_that_gave_the_table_a_new_identity() -> None:
    operations = ["CREATE OR REPLACE TABLE AS SELECT", "VACUUM START", "VACUUM END",
                  "CREATE OR REPLACE TABLE AS SELECT", "MERGE", "RESTORE", "DELETE"]  # fmt: skip
    commits = [_commit(v, op, T0 + timedelta(minutes=v)) for v, op in enumerate(operations)]
    assert audit_stream.stream_from(commits) == 5  # the RESTORE
    assert audit_stream.stream_from(commits[:5]) == 3  # the second build's REPLACE
    merges = [_commit(v, "MERGE", T0) for v in range(7, 9)]
    assert audit_stream.stream_from(merges) == 7  # log trimmed: its oldest version


@pytest.mark.parametrize(
    ("predicate", "kept"),
    [
        # an UPDATE typed by hand: Delta records the literal unquoted, with expression ids
        ('["(patient_id#1234 = P0000001)"]', '["(patient_id = ?)"]'),
        ("[\"(patient_id = 'P0000118')\"]", '["(patient_id = ?)"]'),
        ('["(target.subject_pseudonym = source.subject_pseudonym)"]', None),
        (
            '["(isnotnull(city) AND (length(city) > 3))"]',
            '["(isnotnull(city) AND (length(city) > ?))"]',
        ),
        (
            '[{"actionType":"update","predicate":"(city <=> Oxford)"}]',
            '[{"actionType":"update","predicate":"(city <=> ?)"}]',
        ),
        ("[\"(`patient_id` IN ('P1', 'P2'))\"]", '["(`patient_id` IN (?, ?))"]'),
    ],
)
def test_predicates_keep_their_shape_and_lose_their_values(
    predicate: str, kept: str | None
) -> None:
    columns = frozenset({"patient_id", "city", "subject_pseudonym"})
    assert audit_stream.redact_predicate(predicate, columns) == (kept or predicate)


def _checkpoint(folder: Path, offsets: list[tuple[int, int]], committed: int) -> Path:
    """A stream checkpoint as Spark writes it: offsets/<batch> and commits/<batch>."""
    for name in ("offsets", "commits"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    for batch, (version, index) in enumerate(offsets):
        offset = {"sourceVersion": 1, "reservoirVersion": version, "index": index}
        (folder / "offsets" / str(batch)).write_text(
            'v1\n{"batchWatermarkMs":0}\n' + json.dumps(offset)
        )
        if batch < committed:
            (folder / "commits" / str(batch)).write_text("v1\n{}")
    return folder


def test_a_stream_has_read_a_version_once_it_holds_a_file_index_of_it(tmp_path: Path) -> None:
    """Delta's offset after reading version R is (R, index of its last file); (R, -1)
    has read nothing of R yet. A batch with an offset but no commit is pending."""
    assert audit_stream.read_through(tmp_path / "none") is None
    assert audit_stream.read_through(_checkpoint(tmp_path / "a", [(1, -1), (3, 0)], 2)) == 3
    assert audit_stream.read_through(_checkpoint(tmp_path / "b", [(1, -1), (4, -1)], 2)) == 3
    assert audit_stream.read_through(_checkpoint(tmp_path / "c", [(1, -1), (3, 0)], 1)) == -2
    broken = _checkpoint(tmp_path / "d", [(1, -1)], 1)
    (broken / "offsets" / "0").write_text("v1\nnot json")
    assert audit_stream.read_through(broken) == -2
