"""Erasure benchmark: the project's batched gdpr_erase vs one DELETE per subject per table.

    python bench/erasure.py                       # 3,000 patients, erase 1 / 100 / 1,000
    python bench/erasure.py --patients 5000 --sizes 1 100 1000 --loop-sample 50

Same data, same run, same JVM. For each request size k (disjoint patients per k):
  1. loop   the pattern of shared reference 001 done naively: for each subject, for each
            relation that holds patients (bronze, silver, gold, snapshot), one
            `DELETE FROM t WHERE key = '<id or pseudonym>'`. Beyond --loop-sample subjects
            the per-subject cost is measured on the sample and extrapolated (marked ~).
            The relations are then RESTOREd to the versions before the loop.
  2. batched  `dbt run-operation gdpr_erase` for the same k subjects, end to end (requests,
            tombstones, one MERGE per relation, vault shred + purge, evidence): strictly
            more work than the loop does.
Both are checked: the loop's deleted rows (sampled, scaled) and the batched evidence
must equal the rows counted before, so a fast wrong run fails.
Wall seconds and core-seconds (CPU time of the Spark JVM, /proc) are printed side by side.

State lives in <LAKEHOUSE_DIR or .lakehouse>/bench-erasure, apart from `make run`'s data.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import Clock, bench_state, dbt_invoker


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--patients", type=int, default=3000)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 100, 1000])
    parser.add_argument(
        "--loop-sample",
        type=int,
        default=30,
        help="subjects the loop really runs per size (rest extrapolated)",
    )
    parser.add_argument(
        "--rebuild", action="store_true", help="regenerate and rebuild the bench lakehouse"
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if sum(args.sizes) > args.patients * 0.9:
        parser.error("the sizes need more patients: sum(sizes) must stay below 90% of --patients")

    state = bench_state("bench-erasure")
    if args.rebuild and state.exists():
        import shutil

        shutil.rmtree(state)

    from demo import generate
    from python_jobs.relations import delta_relations
    from python_jobs.spark import get_spark

    spark = get_spark("gdpr_lakehouse.bench_erasure")
    target = state / "target"
    dbt = dbt_invoker(state)

    if not spark.catalog.tableExists("privacy.erasure_requests"):
        print(f"building the bench lakehouse: {args.patients} patients ...", flush=True)
        generate.main(["--patients", str(args.patients), "--landing", str(state / "landing")])
        dbt("build", "--exclude", "resource_type:test")
    dbt("parse")
    plan = [
        r
        for r in delta_relations(json.loads((target / "manifest.json").read_text()))
        if r.privacy.get("subject_key")
        and r.privacy.get("on_erasure") in ("delete", "anonymize")
        and r.privacy.get("role") != "vault"
        and r.privacy.get("subject_type") in (None, "patient")
    ]
    candidates = [
        (row[0], row[1])
        for row in spark.sql(
            "select k.subject_id, k.subject_pseudonym from privacy.subject_keys k "
            "join silver.patients s on s.patient_pseudonym = k.subject_pseudonym "
            "where k.subject_type = 'patient' order by k.subject_id"
        ).collect()
    ]
    if len(candidates) < sum(args.sizes):
        raise SystemExit(f"only {len(candidates)} patients left to erase; run with --rebuild")

    def key_of(relation, subject) -> str:
        return subject[1] if relation.privacy.get("subject_key_kind") == "pseudonym" else subject[0]

    def rows_of(subjects) -> int:
        total = 0
        for relation in plan:
            keys = ", ".join(f"'{key_of(relation, s)}'" for s in subjects)
            key = relation.privacy["subject_key"]
            total += spark.sql(
                f"select count(*) from {relation.qualified_name} where `{key}` in ({keys})"
            ).first()[0]
        return total

    results = []
    offset = 0
    for size in args.sizes:
        subjects = candidates[offset : offset + size]
        offset += size
        expected = rows_of(subjects)
        versions = {
            r.qualified_name: spark.sql(f"describe history {r.qualified_name} limit 1").first()[
                "version"
            ]
            for r in plan
        }

        # 1. loop: one DELETE per subject per relation (sampled)
        sample = subjects[: args.loop_sample]
        sample_rows = rows_of(sample)
        with Clock(spark) as loop:
            for subject in sample:
                for relation in plan:
                    key = relation.privacy["subject_key"]
                    spark.sql(
                        f"delete from {relation.qualified_name} where `{key}` = '{key_of(relation, subject)}'"
                    ).collect()
        if rows_of(sample) != 0:
            raise SystemExit("the loop left rows behind")
        scale = size / len(sample)
        for name, version in versions.items():
            spark.sql(f"restore table {name} to version as of {version}").collect()
        if rows_of(subjects) != expected:
            raise SystemExit("RESTORE did not bring the data back")

        # 2. batched: the real operation
        ids = json.dumps({"subject_ids": [s[0] for s in subjects]})
        with Clock(spark) as batched:
            dbt("run-operation", "gdpr_erase", "--args", ids)
        if rows_of(subjects) != 0:
            raise SystemExit("gdpr_erase left rows behind")
        erased = spark.sql(
            "select coalesce(sum(e.rows_affected), 0) from privacy.erasure_evidence e "
            "join privacy.erasure_requests r using (request_id) "
            f"where r.subject_id in ({', '.join(repr(s[0]) for s in subjects)}) and e.action != 'shred'"
        ).first()[0]
        if erased != expected:
            raise SystemExit(f"evidence says {erased} rows, {expected} were there")

        loop_wall, loop_cpu = loop.wall * scale, loop.cpu * scale
        results.append(
            {
                "subjects": size,
                "rows": expected,
                "relations": len(plan),
                "loop_measured_subjects": len(sample),
                "loop_sample_rows": sample_rows,
                "loop_wall_s": round(loop_wall, 2),
                "loop_core_s": round(loop_cpu, 2),
                "batched_wall_s": round(batched.wall, 2),
                "batched_core_s": round(batched.cpu, 2),
                "ratio_wall": round(loop_wall / batched.wall, 1),
                "ratio_core": round(loop_cpu / batched.cpu, 1) if batched.cpu else None,
            }
        )
        print(f"  k={size}: loop {loop_wall:.1f} s, batched {batched.wall:.1f} s", flush=True)

    cores = os.cpu_count()
    print(
        f"\nErasure over {len(plan)} patient relations + vault, {args.patients} patients, {cores} cores, one JVM:"
    )
    header = f"{'subjects':>8} {'rows':>7} {'loop wall s':>12} {'loop core-s':>12} {'batched wall s':>15} {'batched core-s':>15} {'ratio wall':>11} {'ratio core':>11}"
    print(header)
    for r in results:
        mark = "~" if r["loop_measured_subjects"] < r["subjects"] else " "
        print(
            f"{r['subjects']:>8} {r['rows']:>7} {mark + format(r['loop_wall_s'], '.1f'):>12} {mark + format(r['loop_core_s'], '.1f'):>12} "
            f"{r['batched_wall_s']:>15.1f} {r['batched_core_s']:>15.1f} {r['ratio_wall']:>10.1f}x {r['ratio_core'] or 0:>10.1f}x"
        )
    print("~ = loop measured on the first --loop-sample subjects and scaled linearly to k")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
