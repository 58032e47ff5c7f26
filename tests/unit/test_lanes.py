"""tests/lanes.py: the two lanes' commands and the summary printed last."""

from __future__ import annotations

from tests import lanes

REPORT_1 = """============================= slowest 30 durations =============================
341.20s call     tests/functional/test_reliability.py::test_racing
12.05s setup    tests/functional/test_build.py::test_both_builds_pass_every_node
0.50s teardown tests/functional/test_build.py::test_x[a b]
=========================== 3 passed in 400.00s ===========================
"""
REPORT_2 = """4.53s call     tests/unit/test_databricks.py::test_names[{pii: "x') or ('"}-is not]
"""


def test_the_slowest_phases_of_both_lanes_come_first_whatever_lane_printed_them() -> None:
    lines = lanes.slowest(REPORT_1 + "noise 1.0s call\n" + REPORT_2, count=3).splitlines()
    assert [line.split()[0] for line in lines] == ["341.2s", "12.1s", "4.5s"]
    assert lines[2].endswith("""test_names[{pii: "x') or ('"}-is not]""")
    assert lanes.slowest("no report at all") == ""


def test_each_suite_runs_in_exactly_one_lane() -> None:
    first, second = lanes.lanes(["-x"])
    for own in lanes.OWN_STATE:
        assert own in second
        if own.startswith(lanes.SHARED):
            assert f"--ignore={own}" in first
    assert first[-1] == second[-1] == "-x"
    # what `make test` defers (make test-slow) runs in neither lane
    for test in lanes.DEFERRED:
        assert f"--deselect={test}" in first and f"--deselect={test}" in second
