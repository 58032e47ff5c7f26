"""bench/pruning.py without Spark: its refusals (nothing created), the batches it erases,
the files it counts as read, and the chart of a past run (--replot)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from bench import pruning


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--rows", "999"], "--rows must be between 10,000"),
        (["--files", "1"], "--files must be between 2"),
        (["--runs", "0"], "--runs must be between 1 and 9"),
        (["--sizes", "0"], "--sizes must be between 1"),
        (
            ["--rows", "20000", "--sizes", "1001"],
            "--sizes must be between 1 and --rows / 20 (1000)",
        ),
        (["--replot", "no-such.json"], "--replot: no such file"),
    ],
)
def test_bad_arguments_are_refused_before_anything_starts(
    argv: list[str], message: str, capsys: pytest.CaptureFixture, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("LAKEHOUSE_DIR", str(tmp_path / "state"))
    with pytest.raises(SystemExit) as stopped:
        pruning.main(argv)
    assert stopped.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "state").exists()


def test_a_batch_is_spread_over_the_subjects_and_keyed_like_the_table() -> None:
    keys = pruning.batch(2_000_000, 4)
    assert keys == [
        hashlib.sha256(str(i).encode()).hexdigest() for i in (0, 250_000, 500_000, 750_000)
    ]
    assert len(set(pruning.batch(2_000_000, 1000))) == 1000


def test_files_read_are_those_whose_key_range_can_hold_a_needle() -> None:
    files = pruning.Files.__new__(pruning.Files)
    files.ranges = [("0000", "3fff", 10), ("4000", "7fff", 20), ("8000", "ffff", 40)]
    assert files.holding(None) == (3, 70)
    assert files.holding(["41"]) == (1, 20)
    assert files.holding(["3fff", "8001"]) == (2, 50)


def test_replot_draws_a_past_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    results = [
        {
            "subjects": size,
            "layout": layout,
            "case": case,
            "files": 1000,
            "files_read": read,
            "bytes_read": read * 1000,
            "wall_s": 1.0,
            "core_s": core,
            "runs_core_s": [core],
        }
        for size, layout, case, read, core in (
            (1, "Z-ordered", "MERGE, every file", 1000, 15.7),
            (1, "Z-ordered", "MERGE, pruned", 2, 3.2),
            (10, "Z-ordered", "MERGE, every file", 1000, 17.4),
            (10, "Z-ordered", "MERGE, pruned", 20, 3.6),
        )
    ]
    report = {
        "rows": 10_000_000,
        "runs": 3,
        "ran_at": "2026-12-02T09:00:00+00:00",
        "results": results,
    }
    path = tmp_path / "pruning_10000000.json"
    path.write_text(json.dumps(report))
    assert pruning.main(["--replot", str(path)]) == 0
    out = capsys.readouterr().out
    assert "core-s 0.20x, files 0.002x" in out and "core-s 0.21x, files 0.020x" in out
    assert (tmp_path / "pruning_10000000.png").stat().st_size > 10_000
