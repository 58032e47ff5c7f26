"""Random histories of a lakehouse's life, from a seed, and their shrinking.

A history is a list of steps, each a JSON object a World (world.py) applies:

    {"op": "land", "file": "F03.parquet", "folder": "", "rows": [{"s": 2, "op": "update", "t": 140}]}
    {"op": "land", ..., "corrupt": true}     a file Spark cannot read (its events wait)
    {"op": "land", ..., "mistyped": true}    its source time written as text: no row of
                                              it can be read as the source declares
    {"op": "repair", "file": "F03.parquet", "folder": ""}   the file written whole
    {"op": "replace", "file": "F03.parquet", "folder": ""}  a readable file sent again in
                                              place, same size, every address corrected
                                              by a change a second later
    {"op": "rectify", "s": 2, "v": 7}         python -m python_jobs.rectify of the address
    {"op": "audit"}                           python -m python_jobs.audit_stream --once
    {"op": "build"}                           dbt run of the patients' lineage
    {"op": "build", "full_refresh": true}     the same, --full-refresh
    {"op": "erase", "s": 2, "crash": "tombstone"}   request_erasure + gdpr_erase
                                              (crashed after a step, then run again)
    {"op": "restore", "build": 1}             restore_version of silver to the version
                                              the history's second build left
    {"op": "restore", "build": 1, "model": "bronze_patients", "cascade": true}
                                              the same of bronze (and silver, gold)
    {"op": "restore", "build": 1, "by": "timestamp"}   the same, by the time just after
                                              that build (UTC), not its version
    {"op": "restore", ..., "crash": "rerun"}  killed after its first RESTORE (var
                                              gdpr_lakehouse_fault), then run again;
                                              "crash": "erase": healed by gdpr_erase
    {"op": "restore", "savepoint": "sp1"}     restore_version of silver from a savepoint
    {"op": "savepoint", "name": "sp1"}        savepoint of silver's newest version
    {"op": "savepoint", "name": "sp2", "build": 0, "crash": true}
                                              of the version a build left, killed after
                                              the copy, healed by gdpr_erase
    {"op": "release", "name": "sp1"}          release_savepoint
    {"op": "snapshot"}                        dbt snapshot
    {"op": "hold", "s": 2}                    legal_hold ({"release": true}: released)
    {"op": "comply"}                          dbt test --select tag:compliance (must pass)
    {"op": "purge"}                           python -m python_jobs.purge, retention 0
    {"op": "refuse", "kind": "bad-id"}        a command given bad input (refused, no change)

Subjects are numbers and times seconds from an epoch: a World gives them ids and dates
of its own. The same seed gives the same history on any machine (random.Random).
"""

from __future__ import annotations

import random
from collections.abc import Callable

# gdpr_erase's step boundaries a crash is injected after (var erasure_crash_after)
CRASH_POINTS = ("claim", "tombstone", "bronze.patients", "silver.patients", "shred:deleted")


class Generator:
    """Draws the next step from what the history has done so far."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        # the draws added since the first saved histories: a stream of their own, so a
        # seed draws the same steps it always did, with these details added
        self.more = random.Random(f"{seed}:more")
        self.subjects = 0  # subjects 1..n have been named by an event
        self.erased: set[int] = set()
        self.files: list[dict] = []
        self.corrupt: list[dict] = []
        self.builds = 0
        self.clock = 1000  # seconds from the epoch of the newest event so far
        self.built = False  # silver exists
        self.savepoints: list[str] = []
        self.named = 0
        self.held: list[int] = []
        self.silver_restored = 0  # builds made before silver was last restored on its own
        self.erased_after = 0  # builds made before the last erasure
        self.stale = False  # landed, or bronze restored, since the last build

    # landing -------------------------------------------------------------------------

    def _file(self, rows: list[dict], **extra) -> dict:
        step = {"op": "land", "file": f"F{len(self.files):03d}.parquet", "folder": "", "rows": rows}
        step.update(extra)
        self.files.append(step)
        return step

    def _known(self) -> int | None:
        live = [s for s in range(1, self.subjects + 1) if s not in self.erased]
        return self.rng.choice(live) if live else None

    def _new(self) -> int:
        self.subjects += 1
        return self.subjects

    def _tick(self) -> int:
        self.clock += self.rng.choice((0, 1, 30, 600))  # 0: a same-second tie
        return self.clock

    def normal(self) -> dict:
        rows = []
        for _ in range(self.rng.randint(1, 4)):
            known = self._known()
            if known is None or self.rng.random() < 0.4:
                rows.append(
                    {"s": self._new(), "op": self.rng.choice(("insert", "c")), "t": self._tick()}
                )
            else:
                op = self.rng.choice(("update", "update", "u", "delete"))
                rows.append({"s": known, "op": op, "t": self._tick()})
        return self._file(rows)

    def late(self) -> dict:
        known = self._known() or self._new()
        back = self.rng.choice((1, 60, 900))
        return self._file([{"s": known, "op": "update", "t": max(0, self.clock - back)}])

    def tie(self) -> dict:
        """Two events of one subject in the same second, in one file: the later row wins."""
        known = self._known() or self._new()
        t = self._tick()
        return self._file([{"s": known, "op": "update", "t": t}, {"s": known, "op": "u", "t": t}])

    def delete_then_older_insert(self) -> dict:
        known = self._known() or self._new()
        t = self._tick()
        self._file([{"s": known, "op": "delete", "t": t}])
        return {
            "op": "land-many",
            "steps": [self.files[-1], self._file([{"s": known, "op": "insert", "t": t - 5}])],
        }

    def backfill(self) -> dict:
        """Old events landed last under a name that sorts before every other file
        (a source system's backfill): each applies only where it is newer."""
        rows = []
        for _ in range(self.rng.randint(1, 3)):
            subject = self._known() or self._new()
            rows.append(
                {"s": subject, "op": "r", "t": max(0, self.clock - self.rng.randint(1, 3000))}
            )
        step = self._file(rows)
        step["file"] = f"B{len(self.files):03d}.parquet"
        return step

    def replay(self) -> dict:
        readable = [f for f in self.files if not f.get("corrupt")]
        if not readable:
            return self.normal()
        earlier = self.rng.choice(readable)
        return self._file([dict(r) for r in earlier["rows"]], folder=earlier["folder"])

    def invalid(self) -> dict:
        known = self._known() or self._new()
        rows = [
            {"s": None, "op": "insert", "t": self._tick()},
            {"s": known, "op": "update", "t": None},
            {"s": known, "op": "upsert", "t": self._tick()},
        ]
        return self._file(self.rng.sample(rows, self.rng.randint(1, 3)))

    def mistyped(self) -> dict:
        step = self._file([{"s": self._new(), "op": "insert", "t": self._tick()}], mistyped=True)
        self.corrupt.append(step)
        return step

    def replace(self) -> dict:
        readable = [f for f in self.files if not f.get("corrupt") and not f.get("mistyped")]
        if not readable:
            return self.normal()
        earlier = self.more.choice(readable)
        return {"op": "replace", "file": earlier["file"], "folder": earlier["folder"]}

    def rectify(self) -> dict:
        """A subject's address corrected (python_jobs.rectify); one erased, or not in
        bronze, is refused."""
        subject = self.more.randint(1, self.subjects)
        return {"op": "rectify", "s": subject, "v": self.more.randrange(1000)}

    def audit(self) -> dict:
        return {"op": "audit"}

    def corrupt_file(self) -> dict:
        step = self._file([{"s": self._new(), "op": "insert", "t": self._tick()}], corrupt=True)
        self.corrupt.append(step)
        return step

    def repair(self) -> dict:
        step = self.corrupt.pop(self.rng.randrange(len(self.corrupt)))
        return {"op": "repair", "file": step["file"], "folder": step["folder"]}

    def empty(self) -> dict:
        return self._file([])

    def subfolder(self) -> dict:
        step = self.normal()
        step["folder"] = f"2026/{self.rng.randint(1, 12):02d}/{self.rng.randint(1, 28):02d}"
        return step

    def erased_subject_event(self) -> dict:
        if not self.erased:
            return self.normal()
        gone = self.rng.choice(sorted(self.erased))
        return self._file([{"s": gone, "op": "update", "t": self._tick()}])

    # operations ----------------------------------------------------------------------

    def build(self) -> dict:
        self.builds += 1
        self.built = True
        if self.rng.random() < 0.12:
            return {"op": "build", "full_refresh": True}
        return {"op": "build"}

    def erase(self) -> dict:
        roll = self.rng.random()
        if roll < 0.15:
            subject = self._new()  # a subject no feed has named yet
        elif roll < 0.25 and self.erased:
            subject = self.rng.choice(sorted(self.erased))  # erased twice
        elif self.held and roll < 0.45:
            subject = self.rng.choice(self.held)  # held: it waits for the release
        else:
            subject = self._known() or self._new()
        self.erased.add(subject)
        self.erased_after = self.builds
        step: dict = {"op": "erase", "s": subject}
        if self.rng.random() < 0.3:
            step["crash"] = self.rng.choice(CRASH_POINTS)
        return step

    def restore(self) -> dict:
        if self.savepoints and (not self.builds or self.rng.random() < 0.4):
            self.silver_restored = self.builds
            step = {"op": "restore", "savepoint": self.rng.choice(self.savepoints)}
            if self.more.random() < 0.3:
                step["crash"] = self.more.choice(("rerun", "erase"))
            return step
        # most often to before the last erasure: the restore must erase the subject again
        before = self.erased_after if self.rng.random() < 0.6 else 0
        step: dict = {"op": "restore", "build": self.rng.randrange(before or self.builds)}
        if self.rng.random() < 0.5:
            step["model"] = "bronze_patients"
            # a cascade takes silver to where it was just before bronze's next change:
            # the build's silver, unless silver was restored on its own since
            if self.rng.random() < 0.5 and step["build"] >= self.silver_restored:
                step["cascade"] = True
        else:
            self.silver_restored = self.builds
        if self.more.random() < 0.4:
            step["by"] = "timestamp"
        if self.more.random() < 0.3:
            # a cascade killed half way is run again: a heal re-erases, it restores nothing
            step["crash"] = "rerun" if step.get("cascade") else self.more.choice(("rerun", "erase"))
        return step

    def savepoint(self) -> dict:
        self.named += 1
        self.savepoints.append(f"sp{self.named}")
        step: dict = {"op": "savepoint", "name": self.savepoints[-1]}
        if self.builds and self.more.random() < 0.4:  # an older version: it may hold the erased
            step["build"] = self.more.randrange(self.builds)
        if self.more.random() < 0.25:
            step["crash"] = True
        return step

    def hold(self) -> dict:
        """A legal hold on a subject (one an erasure may then ask for), or a release."""
        if self.held and self.rng.random() < 0.5:
            subject = self.held.pop(self.rng.randrange(len(self.held)))
            return {"op": "hold", "s": subject, "release": True}
        subject = self._known() or self._new()
        self.held.append(subject)
        return {"op": "hold", "s": subject}

    def snapshot(self) -> dict:
        return {"op": "snapshot"}

    def release(self) -> dict:
        name = self.savepoints.pop(self.rng.randrange(len(self.savepoints)))
        return {"op": "release", "name": name}

    def refuse(self) -> dict:
        return {"op": "refuse", "kind": self.rng.choice(("bad-id", "future-version", "the-vault"))}

    def purge(self) -> dict:
        # nothing before a purge is restorable
        self.builds = self.silver_restored = self.erased_after = 0
        return {"op": "purge"}

    def next(self) -> list[dict]:
        """The next step(s): landings are most of a history, a build follows often."""
        choices: list[tuple[float, Callable[[], dict]]] = [
            (6, self.normal),
            (2, self.late),
            (1, self.tie),
            (1, self.delete_then_older_insert),
            (1, self.replay),
            (0.7, self.backfill),
            (1, self.invalid),
            (0.7, self.corrupt_file),
            (0.5, self.empty),
            (1, self.subfolder),
            (0.7, self.erased_subject_event),
            (6, self.build),
            (3, self.erase),
            (1.5 if self.builds or self.savepoints else 0, self.restore),
            (0.6 if self.built else 0, self.savepoint),
            (0.5 if self.built else 0, self.snapshot),
            (0.8, self.hold),
            (0.3 if self.savepoints else 0, self.release),
            (0.6, self.purge),
            (0.5, self.refuse),
            (1.5 if self.corrupt else 0, self.repair),
        ]
        # steps added since the first saved histories: drawn from a stream of their own
        # first, so a seed that does not draw them draws the steps it always did
        extra: list[tuple[float, Callable[[], dict]]] = [
            (0.02, self.mistyped),
            (0.02 if self.files else 0, self.replace),
            (0.03 if self.built and not self.stale and self.subjects else 0, self.rectify),
            (0.03 if self.built else 0, self.audit),
        ]
        roll, step = self.more.random(), None
        for weight, draw in extra:
            if roll < weight:
                step = draw()
                break
            roll -= weight
        if step is None:
            weights = [w for w, _ in choices]
            step = self.rng.choices([f for _, f in choices], weights)[0]()
        steps = step["steps"] if step["op"] == "land-many" else [step]
        for drawn in steps:
            if drawn["op"] == "build":
                self.stale = False
            elif drawn["op"] in ("land", "repair", "replace") or (
                drawn["op"] == "restore" and drawn.get("model") == "bronze_patients"
            ):
                self.stale = True
        return steps


def generate(seed: int, steps: int, comply: bool = True) -> list[dict]:
    """A history of at least `steps` steps, ending in a build (every law then applies)
    and, with `comply`, the compliance suite, which must pass."""
    generator = Generator(seed)
    history: list[dict] = []
    while len(history) < steps:
        history += generator.next()
    if history[-1]["op"] != "build":
        generator.builds += 1
        history.append({"op": "build"})
    return history + ([{"op": "comply"}] if comply else [])


def shrink(history: list[dict], fails: Callable[[list[dict]], bool]) -> list[dict]:
    """A shorter history that still fails: steps dropped in chunks, then one by one
    (delta debugging), each candidate replayed by `fails` on a fresh World. A repair
    without its file or a restore without its build is skipped by the World."""
    chunk = max(1, len(history) // 2)
    while chunk >= 1:
        start, shrunk = 0, False
        while start < len(history):
            candidate = history[:start] + history[start + chunk :]
            if candidate and fails(candidate):
                history, shrunk = candidate, True
            else:
                start += chunk
        if not shrunk:
            chunk //= 2
    return history
