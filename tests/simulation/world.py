"""The real lakehouse a simulated history drives, and the laws checked after each step.

Every operation runs the way a user runs it: landing files written to the landing zone,
`dbt run` and `dbt run-operation` in-process (tests/dbt_harness.py), the purge job's
main(). A history names its subjects and files without a prefix (subject 3, file
F07.parquet); a World maps them to ids and names of its own (P7<hh>0003,
sim<hhhh>-F07.parquet), so many histories share one lakehouse and one JVM, and a saved
history replays anywhere. The laws read the lakehouse (Spark for the tables, pyarrow
and plain bytes for the files) and compare it with the oracle (oracle.Lakehouse), fed
the same operations; never with the project's own summaries.
"""

from __future__ import annotations

import gzip
import json
import os
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from demo import generate
from python_jobs import audit_stream, purge, rectify
from python_jobs.project import landing_dir
from python_jobs.relations import (
    DeltaRelation,
    delta_relations,
    is_built,
    kept_savepoints,
    table_location,
    table_ref,
)
from tests.dbt_harness import DbtProject, decrypted
from tests.simulation.oracle import Lakehouse

SOURCE = "patients"
# what a build of the patients' lineage runs: the batch, the vault and the system keys,
# the delete markers, the rejected events, bronze (its post-hook writes the ledger),
# silver and what silver reads, and the gold relations built from silver.patients (the
# compliance suite holds a retained aggregate to its upstream)
BUILD = ("run", "--select", "+silver_patients", "gold_patient_summary", "gold_patients_by_city")
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
CITIES = ("Eastmoor", "Westhaven", "Lakeside", "Hillcrest")
# the landing files the simulation wrote corrupt and did not repair yet, over every
# history of the process (one that ends with one leaves it to the next): the file
# scan's exception
WRITTEN_CORRUPT: set[Path] = set()


class LawBroken(AssertionError):
    """A law of the lakehouse does not hold after a step."""

    def __init__(self, law: str, detail: str) -> None:
        super().__init__(f"{law}: {detail}")
        self.law = law


class World:
    """One history's view of the shared lakehouse: its subjects, files and oracle."""

    def __init__(self, dbt: DbtProject, spark: Any, history: int) -> None:
        self.dbt, self.spark = dbt, spark
        self.history = history
        self.prefix = f"P7{history % 100:02d}"
        self.tag = f"sim{history:04d}-"
        self.folder = landing_dir() / SOURCE
        self.model = Lakehouse()
        self.pseudonyms: dict[str, str] = {}  # subject id -> pseudonym, as the vault gave it
        # per build: bronze's and silver's versions, and the oracle's bronze and silver
        self.builds: list[dict] = []
        self.savepoints: dict[str, dict] = {}  # the history's name -> the oracle's silver
        self.purged = False  # the last purge succeeded
        self.rectified: set[str] = set()  # subjects a rectification landed an event of
        self.step = 0
        self.timings: list[tuple[str, float]] = []  # (operation, seconds with its laws)

    # names ---------------------------------------------------------------------------

    def subject(self, number: int | None) -> str | None:
        return None if number is None else f"{self.prefix}{number:04d}"

    def path(self, file: str, folder: str = "") -> str:
        """The file's path under the source's folder, as bronze records it."""
        return f"{folder}/{self.tag}{file}" if folder else f"{self.tag}{file}"

    def email(self, subject_id: str) -> str:
        return f"sim.{subject_id.lower()}@example.org"

    # operations ----------------------------------------------------------------------

    def rows(self, step: dict) -> list[dict]:
        """The step's events as the source writes them: every value of a subject is
        theirs alone (the file scan looks for them), the address names the event."""
        name = self.path(step["file"], step.get("folder", ""))
        out = []
        for i, event in enumerate(step["rows"]):
            subject_id = self.subject(event.get("s"))
            ts = event.get("t")
            out.append(
                {
                    "patient_id": subject_id,
                    "full_name": f"Sim Person {subject_id}",
                    "email": self.email(subject_id or "nobody"),
                    "phone": "+44 7700 900123",
                    "national_id": f"ZZ{subject_id}Q",
                    "birth_date": date(1980, 1, 1),
                    "address": f"{i} {name}",
                    "city": CITIES[(event.get("t") or 0) % len(CITIES)],
                    "insurer": "Civic Care",
                    "_op": event.get("op"),
                    "_source_ts": None if ts is None else EPOCH + timedelta(seconds=ts),
                }
            )
        return out

    def land(self, step: dict) -> None:
        name = self.path(step["file"], step.get("folder", ""))
        rows = self.rows(step)
        target = self.folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if step.get("corrupt"):
            target.write_bytes(b"PAR1 this is not a Parquet file")
            WRITTEN_CORRUPT.add(target.resolve())
        elif step.get("mistyped"):  # the source time as text: Spark reads no row of it
            texts = [{**r, "_source_ts": str(r["_source_ts"])} for r in rows]
            schema = generate.SCHEMAS[SOURCE]
            at = schema.get_field_index("_source_ts")
            pq.write_table(
                pa.Table.from_pylist(
                    texts, schema=schema.set(at, pa.field("_source_ts", pa.string()))
                ),
                target,
            )
        else:
            pq.write_table(pa.Table.from_pylist(rows, schema=generate.SCHEMAS[SOURCE]), target)
        readable = not (step.get("corrupt") or step.get("mistyped"))
        self.model.land(name, rows, readable=readable)

    def replace(self, step: dict) -> None:
        """A file sent again in place, of the same size: every address corrected (upper
        case: as long as before), each a change a second later than the one it
        corrects. Its events are the file's from now on. (A correction that keeps the
        change times is the same event to bronze, not applied again: see
        docs/guides/prove.md.)"""
        name = self.path(step["file"], step.get("folder", ""))
        landed = self.model.files.get(name)
        if landed is None or not landed.readable:
            return  # a shrunk history without that file, or one never readable
        rows = [
            {
                **r,
                "address": r["address"].upper(),
                "_source_ts": r["_source_ts"] and r["_source_ts"] + timedelta(seconds=1),
            }
            for r in landed.rows
        ]
        target = self.folder / name
        size = target.stat().st_size
        table = pa.Table.from_pylist(rows, schema=generate.SCHEMAS[SOURCE])
        pq.write_table(table, target, compression="none", write_statistics=False)
        if target.stat().st_size != size:  # keep the same size when the first write differs
            pq.write_table(table, target)
        self.model.land(name, rows)

    def audit(self, step: dict) -> None:
        """python -m python_jobs.audit_stream --once: then every commit of bronze's and
        silver's patients the Delta history shows is in audit.change_log, and no
        (relation, version, change type) twice."""
        code = audit_stream.main(["--once"], spark=self.spark)
        if code != 0:
            raise LawBroken("every commit audited", f"audit_stream --once exited {code}")
        for relation in ("bronze.patients", "silver.patients"):
            versions = {r[0] for r in self.spark.sql(f"describe history {relation}").collect()}
            audited = {
                r[0]
                for r in self.spark.sql(
                    "select distinct commit_version from audit.change_log "
                    f"where relation = '{relation}'"
                ).collect()
            }
            if versions - audited:
                raise LawBroken(
                    "every commit audited",
                    f"{relation}: versions {sorted(versions - audited)[:5]} not in audit.change_log",
                )
        twice = self.spark.sql(
            "select relation, commit_version, change_type from audit.change_log "
            "group by relation, commit_version, change_type having count(*) > 1 limit 3"
        ).collect()
        if twice:
            raise LawBroken("every commit audited once", f"twice: {[tuple(r) for r in twice]}")

    def rectify(self, step: dict) -> None:
        """python -m python_jobs.rectify of the subject's address: one event landed, the
        subject's bronze row with the new address, newer than all of theirs; refused
        (recorded, nothing landed) for a subject erased, being erased, or not in bronze."""
        subject_id = self.subject(step["s"])
        value = f"{step['v']} Rectified Road"
        before = {p for p in self.folder.rglob("*") if p.is_file()}
        rectify.main(["--subject-id", subject_id, "--set", f"address={value}"], spark=self.spark)
        landed = sorted({p for p in self.folder.rglob("*") if p.is_file()} - before)
        model = self.model
        status = self.spark.sql(
            "select status from privacy.rectification_requests "
            f"where subject_id = '{subject_id}' order by received_at desc, request_id desc limit 1"
        ).first()
        held = model.bronze.get(subject_id)
        if held is None or subject_id in model.erased | model.waiting:
            if landed or status is None or status[0] != "refused":
                raise LawBroken(
                    "a refused rectification lands nothing",
                    f"{subject_id}: request {status and status[0]!r}, landed {landed}",
                )
            return
        rows = pq.read_table(landed[0]).to_pylist() if len(landed) == 1 else []
        newest = max(e.ts for e in model.events() if e.key == subject_id and e.ts is not None)
        row = rows[0] if len(rows) == 1 else {}
        ts = row.get("_source_ts")
        if ts is not None and ts.tzinfo is None:
            ts = ts.replace(tzinfo=UTC)
        kept = ("patient_id", "full_name", "email", "phone", "national_id", "birth_date", "city")
        if (
            not row
            or row.get("address") != value
            or any(row.get(c) != held.values[c] for c in kept)
            or ts is None
            or ts <= newest
        ):
            raise LawBroken(
                "a rectification lands one event: the subject's row, changed, newest",
                f"{subject_id}: landed {landed}, rows {rows}",
            )
        model.land(landed[0].relative_to(self.folder).as_posix(), [{**row, "_source_ts": ts}])
        self.rectified.add(subject_id)

    def repair(self, step: dict) -> None:
        name = self.path(step["file"], step.get("folder", ""))
        landed = self.model.files.get(name)
        if landed is None:
            return  # a shrunk history without that file: nothing to repair
        table = pa.Table.from_pylist(landed.rows, schema=generate.SCHEMAS[SOURCE])
        pq.write_table(table, self.folder / name)
        WRITTEN_CORRUPT.discard((self.folder / name).resolve())
        self.model.repair(name)

    def build(self, step: dict) -> None:
        """dbt run of the lineage; with "full_refresh", bronze and silver rebuilt from
        the whole landing zone (the vault, the ledger and the control tables keep
        their rows: full_refresh=false)."""
        self.dbt.invoke(*BUILD, *(["--full-refresh"] if step.get("full_refresh") else []))
        self.model.build()
        self.learn_pseudonyms()
        if self.rectified:  # the job confirms what the build applied
            rectify.main([], spark=self.spark)
            rows = self.spark.sql(
                "select subject_id, status from privacy.rectification_requests "
                f"where subject_id in ({', '.join(repr(s) for s in sorted(self.rectified))}) "
                "and status in ('landed', 'applied', 'cancelled')"
            ).collect()
            missing = self.rectified - {row[0] for row in rows}
            if missing:  # a landed request gone from the log is no confirmation
                raise LawBroken(
                    "a rectification the build applied is confirmed `applied`",
                    f"{sorted(missing)}: no landed, applied or cancelled request",
                )
            for row in rows:
                allowed = {"applied", "cancelled"} if row[0] in self.model.erased else {"applied"}
                if row[1] not in allowed:
                    raise LawBroken(
                        "a rectification the build applied is confirmed `applied`",
                        f"{row[0]}: {row[1]}, expected within {sorted(allowed)}",
                    )
        self.builds.append(
            {
                "bronze": self.version("bronze.patients"),
                "silver": self.version("silver.patients"),
                # a moment after the build's last commit, before the next step's first
                "at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f"),
                "bronze_state": dict(self.model.bronze),
                "silver_state": dict(self.model.silver),
            }
        )

    def version(self, relation: str) -> int:
        return int(self.spark.sql(f"describe history {relation}").first()["version"])

    def erase(self, step: dict) -> None:
        subject_id = self.subject(step["s"])
        args = {"subject_ids": [subject_id], "reason": "simulation"}
        self.dbt.operation("request_erasure", args)
        if step.get("crash"):
            ok, errors = self.dbt.invoke_errors(
                "run-operation",
                "gdpr_erase",
                "--vars",
                json.dumps({"erasure_crash_after": step["crash"]}),
            )
            if ok or "crash injected" not in errors:
                raise LawBroken("crash", f"gdpr_erase did not stop at {step['crash']}: {errors}")
        self.dbt.operation("gdpr_erase")
        self.model.erase(subject_id)

    def hold(self, step: dict) -> None:
        """legal_hold placed on a subject, or released ("release": true)."""
        subject_id = self.subject(step["s"])
        args: dict = {"subject_ids": [subject_id], "placed_by": "simulation"}
        if step.get("release"):
            self.dbt.operation("legal_hold", {**args, "release": True})
            self.model.release(subject_id)
        else:
            self.dbt.operation("legal_hold", {**args, "reason": "simulation: a court case"})
            self.model.hold(subject_id)

    def restore(self, step: dict) -> None:
        """restore_version of silver to the version a build of the history left (or
        by the time just after it), or from one of its savepoints; or of bronze
        ("model": "bronze_patients"), with "cascade" silver and gold too, to the same
        point in time. A restored bronze reads the files applied after that version
        again at the next build. "crash": killed after its first RESTORE, then run
        again ("rerun") or healed by gdpr_erase ("erase")."""
        model = step.get("model", "silver_patients")
        args: dict = {"model": model, "reason": "simulation"}
        if "savepoint" in step:
            if step["savepoint"] not in self.savepoints:
                return  # a shrunk history without that savepoint
            args["savepoint"] = self.savepoint_name(step["savepoint"])
            self.restore_version(args, step.get("crash"))
            self.model.restore_silver(self.savepoints[step["savepoint"]])
            return
        if step["build"] >= len(self.builds):
            return  # a shrunk history without that build: nothing to restore to
        build = self.builds[step["build"]]
        relation = "bronze" if model == "bronze_patients" else "silver"
        if step.get("by") == "timestamp":
            args["timestamp"] = build["at"]
        else:
            args["version"] = build[relation]
        if model == "bronze_patients" and step.get("cascade"):
            args["cascade"] = True
            self.restore_version(args, "rerun" if step.get("crash") else None)
            self.model.restore_bronze(build["bronze_state"])
            self.model.restore_silver(build["silver_state"])
            return
        self.restore_version(args, step.get("crash"))
        if relation == "bronze":
            self.model.restore_bronze(build["bronze_state"])
        else:
            self.model.restore_silver(build["silver_state"])

    def restore_version(self, args: dict, crash: str | None) -> None:
        """restore_version; with `crash`, first killed right after its first RESTORE
        (nothing re-erased yet), then run again or healed by gdpr_erase."""
        if crash:
            ok, errors = self.dbt.invoke_errors(
                "run-operation",
                "restore_version",
                "--args",
                json.dumps(args),
                "--vars",
                json.dumps({"gdpr_lakehouse_fault": "after_restore"}),
            )
            if ok:
                return  # nothing to restore (already at that version): nothing to kill
            if "fault injected" not in errors:
                raise LawBroken("crash", f"restore_version failed before its fault: {errors}")
            if crash == "erase":
                self.dbt.operation("gdpr_erase")
                self.model.run_erasure()
                return
        self.dbt.operation("restore_version", args)

    def comply(self, step: dict) -> None:
        """`dbt test --select tag:compliance` (but the audit's completeness: no audit
        job runs here) passes: every law held, so the lakehouse is lawful."""
        result = self.dbt.invoke(
            "test", "--select", "tag:compliance", "--exclude", "audit_log_complete",
            expect_success=False,
        )  # fmt: skip
        failed = sorted(
            r.node.name for r in result.result.results if str(r.status) in ("fail", "error")
        )
        if failed or not result.success:
            raise LawBroken(
                "the compliance suite passes on a lawful lakehouse",
                f"failed: {failed or result.exception}",
            )

    def snapshot(self, step: dict) -> None:
        self.dbt.invoke("snapshot")

    def savepoint_name(self, name: str) -> str:
        return f"{self.tag.rstrip('-')}_{name}"

    def savepoint(self, step: dict) -> None:
        """savepoint of silver's newest version, or of the one a build left ("build");
        "crash": killed after the copy (erasures not re-applied), healed by gdpr_erase."""
        if not self.model.built or step["name"] in self.savepoints:
            return  # a shrunk history: no silver yet, or the name taken
        args = {
            "model": "silver_patients",
            "name": self.savepoint_name(step["name"]),
            "reason": "simulation",
        }
        state = self.model.silver
        if "build" in step:
            if step["build"] >= len(self.builds):
                return  # a shrunk history without that build
            args["version"] = self.builds[step["build"]]["silver"]
            state = self.builds[step["build"]]["silver_state"]
        if step.get("crash"):
            ok, errors = self.dbt.invoke_errors(
                "run-operation",
                "savepoint",
                "--args",
                json.dumps(args),
                "--vars",
                json.dumps({"gdpr_lakehouse_fault": "after_savepoint_copy"}),
            )
            if ok or "fault injected" not in errors:
                raise LawBroken("crash", f"savepoint did not stop after its copy: {errors}")
            self.dbt.operation("gdpr_erase")
            self.model.run_erasure()
        else:
            self.dbt.operation("savepoint", args)
        self.savepoints[step["name"]] = {
            k: e for k, e in state.items() if k not in self.model.erased
        }

    def release(self, step: dict) -> None:
        if step["name"] not in self.savepoints:
            return
        self.dbt.operation(
            "release_savepoint",
            {
                "model": "silver_patients",
                "name": self.savepoint_name(step["name"]),
                "reason": "simulation",
            },
        )
        del self.savepoints[step["name"]]

    def purge(self, step: dict) -> None:
        """The purge must fail exactly when a landing file cannot be shown clean (one
        nothing decodes, while someone is erased); when it succeeds, every request of
        an erased subject is `purged` (checked with the other laws)."""
        undecodable = undecodable_files(landing_dir())
        anyone = self.spark.sql(
            "select count(*) from privacy.erasure_requests where status in ('erased', 'purged')"
        ).first()[0]
        code = purge.main(["--retain-hours", "0", "--allow-short-retention"], spark=self.spark)
        expected = 1 if undecodable and anyone else 0
        if code != expected:
            raise LawBroken(
                "a purge fails exactly when a landing file cannot be shown clean",
                f"python -m python_jobs.purge exited {code}, expected {expected}: "
                f"undecodable landing files {[p.name for p in undecodable[:3]]}",
            )
        self.purged = code == 0
        self.model.purge()
        self.builds.clear()  # VACUUM RETAIN 0 HOURS: no earlier version is restorable

    def refuse(self, step: dict) -> None:
        """A command given bad input: it must fail, saying so, and change nothing."""
        args = {
            "bad-id": ("request_erasure", {"subject_ids": ["P7' or '1'='1"], "reason": "sim"}),
            "future-version": (
                "restore_version",
                {"model": "silver_patients", "version": 10**9, "reason": "simulation"},
            ),
            "the-vault": (
                "restore_version",
                {"model": "privacy_subject_keys", "version": 0, "reason": "simulation"},
            ),
        }
        macro, arguments = args[step["kind"]]
        before = state_of_files()
        ok, errors = self.dbt.operation(macro, arguments, expect_success=False)
        if ok or not errors:
            raise LawBroken("bad input refused", f"{macro} {arguments} succeeded")
        after = state_of_files()
        changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
        if changed:
            raise LawBroken("a refused command changes nothing", f"{macro} changed {changed[:5]}")

    def apply(self, step: dict) -> None:
        began = time.monotonic()
        getattr(self, step["op"])(step)
        self.step += 1
        self.check(step)
        self.timings.append((step["op"], time.monotonic() - began))

    # what the lakehouse holds --------------------------------------------------------

    def patient_relations(self) -> list[DeltaRelation]:
        """Every relation of the dbt graph, and every kept savepoint copy, whose privacy
        contract keys it by a patient's pseudonym: read from the graph, never listed
        here. One not built stops the check (a law is not held by a missing table)."""
        relations = delta_relations(self.dbt.manifest())
        holding = [
            r
            for r in relations + kept_savepoints(self.spark, relations)
            if r.privacy.get("subject_type") == "patient"
            and r.privacy.get("subject_key_kind") == "pseudonym"
        ]
        missing = [r.qualified_name for r in holding if not is_built(self.spark, r)]
        if missing or not holding:
            raise LawBroken("every relation of the plan readable", f"not built: {missing}")
        return holding

    def learn_pseudonyms(self) -> None:
        for subject_id, pseudonym in self.keyed().items():
            self.pseudonyms.setdefault(subject_id, pseudonym)

    def keyed(self) -> dict[str, str]:
        return {
            row["subject_id"]: row["subject_pseudonym"]
            for row in self.spark.sql(
                "select subject_id, subject_pseudonym from privacy.subject_keys "
                f"where subject_id like '{self.prefix}%'"
            ).collect()
        }

    def held_rows(self, relation: str, *columns: str) -> dict[str, tuple]:
        """Per subject of the history: its row of `relation` keyed by pseudonym, the
        address decrypted with its live key, then `columns`."""
        extra = "".join(f", t.{c}" for c in columns)
        rows = self.spark.sql(
            f"select k.subject_id, {decrypted('t.address_enc', 'k.data_key')} as address"
            f"{extra} from {relation} t "
            "join privacy.subject_keys k on k.subject_pseudonym = t.patient_pseudonym "
            f"where k.subject_id like '{self.prefix}%'"
        ).collect()
        return {r["subject_id"]: tuple(r)[1:] for r in rows}

    def rejected(self) -> list[tuple[str, str]]:
        rows = self.spark.sql(
            "select source_file, reason from bronze.rejected_events "
            f"where entity = '{SOURCE}' and source_file like '%{self.tag}%'"
        ).collect()
        return sorted((r["source_file"], r["reason"]) for r in rows)

    def ledger(self) -> dict[str, str]:
        rows = self.spark.sql(
            "select file_path, status from bronze.landing_ledger "
            f"where entity = '{SOURCE}' "
            f"and (file_path like '%{self.tag}%' or file_path like '%/rectify-%')"
        ).collect()
        root = self.folder.resolve().as_posix()
        out = {}
        for r in rows:
            path = r["file_path"].removeprefix("file:")
            out[path.split(root + "/", 1)[-1]] = r["status"]
        return out

    # the laws ------------------------------------------------------------------------

    def check(self, step: dict) -> None:
        model = self.model
        keyed = self.keyed()
        again = sorted(set(keyed) & model.erased)
        if again:
            raise LawBroken("erased subject keyed again", f"{again} hold a key")
        # never keyed: no row of theirs was ever written under a pseudonym
        erased = {self.pseudonyms[s]: s for s in model.erased if s in self.pseudonyms}
        listed = ", ".join(f"'{p}'" for p in sorted(erased))
        for relation in self.patient_relations():  # a relation not built stops the check
            key = relation.privacy["subject_key"]
            found = (
                erased
                and self.spark.sql(
                    f"select {key}, count(*) from {table_ref(self.spark, relation)} "
                    f"where {key} in ({listed}) group by {key}"
                ).collect()
            )
            if found:
                raise LawBroken(
                    "erased subject present",
                    f"{erased[found[0][0]]} has {found[0][1]} row(s) in {relation.qualified_name}",
                )
        requests: dict[str, set[str]] = {}
        for row in self.spark.sql(
            "select subject_id, status from privacy.erasure_requests "
            f"where subject_id like '{self.prefix}%'"
        ).collect():
            requests.setdefault(row["subject_id"], set()).add(row["status"])
        expected_requests = {
            **{s: {"erased", "purged"} for s in model.erased},
            **{s: {"held"} for s in model.waiting},
        }
        if step["op"] == "purge" and self.purged:
            expected_requests.update({s: {"purged"} for s in model.erased})
        for subject_id in set(requests) | set(expected_requests):
            allowed = expected_requests.get(subject_id, set())
            if not requests.get(subject_id) or not requests[subject_id] <= allowed:
                raise LawBroken(
                    "every request in the state the oracle gives it",
                    f"{subject_id}: {sorted(requests.get(subject_id, []))}, "
                    f"expected within {sorted(allowed)}",
                )
        if not model.built:
            return
        expected = {k: (e.values["address"], e.op, e.file) for k, e in model.bronze.items()}
        actual = self.held_rows("bronze.patients", "source_op", "source_file")
        if actual != expected:
            raise LawBroken("bronze equals the oracle", _diff(actual, expected))
        silver_expected = {k: e.values["address"] for k, e in model.silver.items()}
        silver = {k: row[0] for k, row in self.held_rows("silver.patients").items()}
        if silver != silver_expected:
            raise LawBroken("silver equals the oracle", _diff(silver, silver_expected))
        if step["op"] == "build":
            rejected = self.rejected()
            if rejected != model.rejected():
                raise LawBroken(
                    "every rejected event listed once",
                    f"listed {Counter(rejected)}, expected {Counter(model.rejected())}",
                )
            ledger = self.ledger()
            for name, landed in model.files.items():
                # a file no row can be read from (corrupt, or empty) waits, rejected
                want = "ingested" if landed.readable and landed.rows else "rejected"
                if ledger.get(name) != want:
                    raise LawBroken(
                        "every landed file in the ledger",
                        f"{name}: {ledger.get(name)!r}, expected {want!r}",
                    )
        if step["op"] == "purge":
            corrupt = set(WRITTEN_CORRUPT)
            retained = tuple(
                Path(table_location(self.spark, r).removeprefix("file:")).resolve()
                for r in delta_relations(self.dbt.manifest())
                if r.privacy.get("on_erasure") == "retain"
            )
            residue = scan_files(self.residue_terms(), corrupt, retained)
            if residue:
                raise LawBroken("no erased subject in any file after a purge", residue[0])

    def residue_terms(self) -> list[str]:
        terms = []
        for subject_id in sorted(self.model.erased):
            terms += [subject_id, self.email(subject_id)]
        return terms


def state_of_files() -> dict[str, tuple[int, int]]:
    """(size, modification time) of every file of the lakehouse and the landing zone
    but Spark's own scratch (checksums, the metastore's lock and log)."""
    out = {}
    for root in (Path(os.environ["LAKEHOUSE_DIR"]), landing_dir()):
        for path in root.rglob("*"):
            if path.is_file() and "metastore" not in path.as_posix() and path.suffix != ".crc":
                stat = path.stat()
                out[path.as_posix()] = (stat.st_size, stat.st_mtime_ns)
    return out


def undecodable_files(folder: Path) -> list[Path]:
    """Files under `folder` that claim a format (Parquet's or gzip's magic number) and
    do not decode as it: pyarrow and gzip, not the project's landing check."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        data = path.read_bytes()
        try:
            if data[:4] == b"PAR1":
                pq.read_table(pa.BufferReader(data))
            elif data[:2] == b"\x1f\x8b":
                gzip.decompress(data)
        except Exception:
            found.append(path)
    return found


def _diff(actual: dict, expected: dict) -> str:
    keys = sorted(set(actual) | set(expected))
    lines = [
        f"{k}: has {actual.get(k)!r}, oracle {expected.get(k)!r}"
        for k in keys
        if actual.get(k) != expected.get(k)
    ]
    return "; ".join(lines[:5]) + (f" (and {len(lines) - 5} more)" if len(lines) > 5 else "")


def scan_files(
    terms: list[str], written_corrupt: set[Path] | None = None, retained: tuple[Path, ...] = ()
) -> list[str]:
    """Every file of the lakehouse, the landing zone and dbt's target/ and logs/ that holds one of
    `terms`: Parquet decoded by pyarrow (every column, as text), every other file as
    bytes. Independent of python_jobs.forensic_scan. A Parquet file pyarrow cannot
    decode is a finding (nothing shows it clean), but one the history wrote corrupt
    (`written_corrupt`: its bytes are the simulation's own, searched as bytes). The
    folders in `retained` are skipped: tables whose contract keeps the subject's id as
    proof (on_erasure: retain)."""
    if not terms:
        return []
    roots = [Path(os.environ["LAKEHOUSE_DIR"]), landing_dir()]
    roots += [Path(os.environ[v]) for v in ("DBT_LOG_PATH", "DBT_TARGET_PATH") if os.environ.get(v)]
    needles = [t.encode() for t in terms]
    found = []
    seen: set[Path] = set()
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            if path in seen or any(path.resolve().is_relative_to(r) for r in retained):
                continue
            seen.add(path)
            try:
                data = path.read_bytes()
            except OSError:
                continue
            hits = [t for t, n in zip(terms, needles, strict=True) if n in data]
            if not hits and path.suffix == ".parquet":
                hits = _decoded_hits(path, terms)
                if hits is None and path.resolve() not in (written_corrupt or set()):
                    found.append(f"{path}: cannot be decoded, so cannot be shown clean")
            if hits:
                found.append(f"{path}: {hits}")
    return found


def _decoded_hits(path: Path, terms: list[str]) -> list[str] | None:
    """The terms among the file's decoded values; None when pyarrow cannot decode it."""
    try:
        table = pq.read_table(path)
    except Exception:
        return None
    text = json.dumps(table.to_pylist(), default=str)
    return [t for t in terms if t in text]
