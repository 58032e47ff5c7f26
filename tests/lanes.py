"""`make test`'s pytest: the suite in two lanes at once, each a pytest process of its own.

    python tests/lanes.py            # what `make test` runs after the linters
    python tests/lanes.py -x         # extra arguments go to both lanes
    python tests/lanes.py --slow     # only the tests `make test` defers (make test-slow)

Each lane has its own throw-away lakehouse and JVM (tests/conftest.py makes one per
pytest process), so they cannot meet. Lane 1 is the suites that share the lakehouse
test_build builds (tests/functional, tests/adversarial, in conftest.py's order). Lane 2
is the unit layer (no JVM), the adopter's lifecycle and the secret-leak probe (projects
and lakehouses of their own), then a second shared lakehouse: the reliability suite
builds it, and the restore, scan, access, simulation, audit and business-time suites
run on what it leaves (each builds one when it finds none, so any of them also runs alone).

Both lanes are CPU-bound on 2 cores and each runs ~1.7x slower beside the other, so
the wall time follows the total work, not the split: what shortens CI is less work.
Lane 1 streams its output; lane 2's follows when both are done. Both print their
slowest tests, and the slowest of the two come last, where the tail of a CI log shows
them. Exit status: the first non-zero. `pytest` alone still runs the whole suite in
one process.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Lane 2, in this order: the suites with state of their own (their own projects,
# lakehouses or subprocesses), then the reliability suite, which builds lane 2's
# lakehouse, and the suites that reuse it (conftest.py puts adversarial suites, then
# test_audit, last).
OWN_STATE = (
    "tests/unit",
    "tests/integration",
    # JVMs of its own (dbt debug), each mapping the class archive
    "tests/functional/test_class_archive.py",
    "tests/functional/test_adopter.py",
    "tests/functional/test_bench.py",
    "tests/functional/test_reliability.py",
    "tests/functional/test_restore.py",
    "tests/functional/test_scan.py",
    "tests/functional/test_access.py",
    # random histories on subjects of their own (tests/simulation/)
    "tests/simulation/test_simulation.py",
    "tests/functional/test_audit.py",
    # its lakehouse, made with the key envelope, is a subprocess's own (envelope_probe)
    "tests/adversarial/test_secret_leaks.py",
    # last (conftest.py): its builds close business days after today
    "tests/functional/test_business_time.py",
)
SHARED = ("tests/functional", "tests/adversarial")
# Run by `make test-slow`, not by `make test` (issue 25): each starts JVMs and builds a
# lakehouse of its own as a user would, and together they were ~35 of the ~180 CPU
# minutes of a CI run that no longer fit in 90 (fresh-clone CI of d1e0c03: lane 1 at
# 89% after 90 min). The loopback cluster's end to end run (its refusals of bad
# settings start nothing and stay, as does one start to ask its servers for the
# secret), the erasure-at-scale and ingestion benchmarks'
# smoke runs, the warm engine's end to end run. And the adopter's lifecycle (a second
# dbt project installing the package, its own JVM and lakehouse: 870 s of setup in the
# fresh-clone CI of 6d0202a, whose wall time was 88 min of the 90): the plain-Jinja
# dispatch test (tests/unit/test_adopter_dispatch.py) stays in `make test`.
DEFERRED = (
    "tests/functional/test_adopter.py",
    "tests/integration/test_thrift_cluster.py::test_build_erase_restore_purge_and_comply_on_the_cluster",
    "tests/integration/test_thrift_cluster.py::test_down_stops_every_process",
    "tests/functional/test_bench.py::test_every_strategy_runs_and_is_checked",
    "tests/functional/test_bench.py::test_the_ingestion_bench_times_a_new_batch_and_a_first_build",
    "tests/functional/test_bench.py::test_the_warm_bench_runs_every_command_through_the_engine",
    # `make run`'s one-process first run, a demo build in a JVM of its own
    "tests/functional/test_bench.py::test_make_runs_first_run_in_one_process_builds_and_audits_everything",
    # both erasure paths on clones of every relation keyed by pseudonym: ~115 s of
    # Spark in a warm JVM (36 clones and MERGEs); the pruned MERGE's equivalence on
    # one relation and gdpr_erase's pruned batch end to end stay in `make test`
    "tests/functional/test_erasure_pruning.py::test_every_relation_keyed_by_pseudonym_erases_the_same_rows_pruned_or_not",
    # the aggregates' eleven steps of landings, erasures and a restore (its upgrade
    # test stays) and a crash at every step boundary of gdpr_erase (the
    # interrupted-batch and crash-window tests stay): the two longest scenarios after
    # the suite outgrew its CI budget (docs/decisions/0025-ci-budget-what-make-test-defers.md)
    "tests/functional/test_aggregates.py::test_anonymous_aggregates_are_k_anonymous_exact_and_blind_to_erasure",
    "tests/functional/test_reliability.py::test_a_crash_at_every_step_boundary_resumes_to_a_complete_erasure",
    # a third lakehouse of lane 2, built in a subprocess with a KEK of its own to grep
    # every file for it (docs/decisions/0025-ci-budget-what-make-test-defers.md). Every lakehouse is enveloped by
    # default now, and test_kek_reach / test_engine_access stay
    "tests/adversarial/test_secret_leaks.py",
)


def lanes(extra: list[str]) -> list[list[str]]:
    pytest = [sys.executable, "-m", "pytest", "--durations=30"]
    ignored = [f"--ignore={path}" for path in OWN_STATE if path.startswith(SHARED)]
    deferred = [f"--deselect={test}" for test in DEFERRED]
    return [
        [*pytest, *SHARED, *ignored, *deferred, *extra],
        [
            *pytest,
            "-p",
            "no:cacheprovider",
            *OWN_STATE,
            *deferred,
            *extra,
        ],
    ]


def main(argv: list[str] | None = None) -> int:
    extra = list(sys.argv[1:] if argv is None else argv)
    if "--slow" in extra:
        extra.remove("--slow")
        slow = [sys.executable, "-m", "pytest", "--durations=30", *DEFERRED, *extra]
        return subprocess.call(slow, cwd=ROOT)
    first, second = lanes(extra)
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as log:
        other = subprocess.Popen(second, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
        try:
            lane = subprocess.Popen(
                first, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
            output = []
            for line in lane.stdout:  # streamed, and kept for the summary
                sys.stdout.write(line)
                sys.stdout.flush()
                output.append(line)
            code = lane.wait()
        finally:
            other_code = other.wait()
        log.seek(0)
        second_output = log.read()
        print(f"\n===== lane 2: {' '.join(OWN_STATE)} =====", flush=True)
        sys.stdout.write(second_output)
    print(f"\n===== the slowest of both lanes =====\n{slowest(''.join(output) + second_output)}")
    print(
        f"lanes: 1 (shared lakehouse) exit {code}, 2 (own state) exit {other_code}; "
        f"{time.monotonic() - started:.0f} s wall"
    )
    return code or other_code


DURATION = re.compile(r"^(\d+\.\d+)s (setup|call|teardown) +(\S.*)$", re.MULTILINE)


def slowest(output: str, count: int = 15) -> str:
    """The `count` slowest test phases in pytest's --durations reports of the lanes,
    printed last, where a CI log's tail still shows them."""
    found = sorted(
        ((float(s), phase, test) for s, phase, test in DURATION.findall(output)), reverse=True
    )
    return "\n".join(f"{s:8.1f}s {phase:8} {test}" for s, phase, test in found[:count])


if __name__ == "__main__":
    sys.exit(main())
