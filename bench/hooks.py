"""What a dbt command costs before its first node: this checkout's on-run-start hooks
and an earlier revision's, alternated in one JVM.

    python bench/hooks.py --base 3235783                 # 5 rounds, 12 patients
    python bench/hooks.py --base HEAD~2 --rounds 9
    python bench/hooks.py --base 54fe216~1 --select bronze_landing_batch \
        privacy_subject_keys bronze_cdc_deletes bronze_rejected_events bronze_patients

Every `dbt run`, `test`, `build` and `snapshot` runs the project's on-run-start hooks
(dbt_project.yml) before its first node: the var checks, the key check, the landing
tables, the heal of an interrupted restore. This builds a small demo lakehouse once,
then runs the same command (`dbt run --select privacy_patients_masked`, one view, or
the models --select names) from this checkout and from a `git worktree` of --base,
alternately, in this process's one JVM, on the same lakehouse. Printed per side: the
median, over every round but the first (the JVM warming up), of each hook's time as
dbt logs it ("N of M OK hook: ... in S s"; the on-run-end hook too), of all hooks
together, of the whole command's wall time and of the statements it sent to Spark
(the "SQL status" lines of dbt's debug log: the same every round, so a change in them
is no noise), and the ratio head/base. Both revisions must run the same hooks, and a
command whose log shows none stops the bench. The worktree is removed at the end.

State lives in <LAKEHOUSE_DIR or .lakehouse>/bench-hooks, apart from `make run`'s data.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import ROOT, base_commit, base_worktree, fresh_bench_state, git, revision_parser

SIDES = ("base", "head")
MODELS = ("privacy_patients_masked",)
MODEL = re.compile(r"^[a-z_][a-z0-9_]{0,99}$")
HOOK = re.compile(r"\d+ of \d+ OK hook: (\S+?) \.+ \[\S*OK\S* in (\d+(?:\.\d+)?)s\]")


def _last_command(log: str) -> str:
    return log[log.rfind("Running with dbt") :]


def hook_seconds(log: str) -> dict[str, float]:
    """The hooks (on-run-start and on-run-end) of the last command in a dbt.log:
    {hook name: seconds}."""
    return {name: float(seconds) for name, seconds in HOOK.findall(_last_command(log))}


def statements(log: str) -> int:
    """How many statements the last command in a dbt.log sent (one "SQL status" line
    each, dbt's debug log)."""
    return _last_command(log).count("SQL status: ")


def hook_labels(project: Path) -> dict[str, str]:
    """dbt's name of each on-run-start hook ("gdpr_lakehouse.on-run-start.6") -> the
    macro it calls, read from the project's dbt_project.yml."""
    import yaml

    hooks = yaml.safe_load((project / "dbt_project.yml").read_text()).get("on-run-start") or []
    labels = {}
    for number, hook in enumerate(hooks if isinstance(hooks, list) else [hooks]):
        called = re.search(r"([A-Za-z_][\w.]*)\(", str(hook))
        labels[f"gdpr_lakehouse.on-run-start.{number}"] = called.group(1) if called else str(hook)
    return labels


def medians(rounds: list[dict[str, float]]) -> dict[str, float]:
    """Per key, the median over the rounds after the first (the JVM warming up)."""
    kept = rounds[1:] or rounds
    return {key: statistics.median(row[key] for row in kept) for key in kept[0]}


def main(argv: list[str] | None = None) -> int:
    parser = revision_parser("python bench/hooks.py", __doc__)
    parser.add_argument("--rounds", type=int, default=5, help="commands per side (2-15)")
    parser.add_argument("--patients", type=int, default=12, help="demo size (1-1000)")
    parser.add_argument(
        "--select",
        nargs="+",
        default=list(MODELS),
        metavar="MODEL",
        help="the models `dbt run --select` runs each round (model names, 1-20)",
    )
    args = parser.parse_args(argv)
    bad = [name for name in args.select if not MODEL.match(name)]
    if bad or not 1 <= len(args.select) <= 20:
        parser.error(
            f"--select takes 1-20 model names (lower case letters, digits, _); got {bad[:1] or len(args.select)}"
        )
    command = ("run", "--select", *args.select)
    if not 2 <= args.rounds <= 15:
        parser.error("--rounds must be between 2 and 15")
    if not 1 <= args.patients <= 1000:
        parser.error("--patients must be between 1 and 1000")
    commit = base_commit(parser, args.base)
    head_commit = git("rev-parse", "HEAD")

    state = fresh_bench_state("bench-hooks")
    from dbt.cli.main import dbtRunner

    from python_jobs import generate
    from python_jobs.spark import get_spark

    get_spark("bench_hooks")  # the one JVM both sides' dbt commands run in
    rounds: dict[str, list[dict[str, float]]] = {side: [] for side in SIDES}
    with base_worktree(state / "base", commit) as worktree:
        projects = {"base": worktree, "head": ROOT}

        def dbt(side: str, *command: str) -> str:
            logs = state / f"logs-{side}"
            target = ["--target-path", str(state / f"target-{side}"), "--log-path", str(logs)]
            done = dbtRunner().invoke(
                [*command, "--project-dir", str(projects[side]), *target, "--quiet"]
            )
            if not done.success:
                raise SystemExit(f"dbt {' '.join(command[:3])} failed on {side}: {done.exception}")
            return (logs / "dbt.log").read_text()

        generate.main(["--patients", str(args.patients)])
        print(f"base {commit[:10]}, head {head_commit[:10]}: building the demo", flush=True)
        dbt("head", "build", "--exclude", "resource_type:test")
        for number in range(args.rounds):
            for side in SIDES if number % 2 == 0 else reversed(SIDES):
                started = time.perf_counter()
                log = dbt(side, *command)
                hooks = hook_seconds(log)
                if not hooks:
                    raise SystemExit(
                        f"no hook's time in dbt's log of {side} ({state}/logs-{side}/dbt.log): "
                        "dbt's log lines changed; nothing to compare"
                    )
                wall = time.perf_counter() - started
                rounds[side].append(
                    {
                        **hooks,
                        "all hooks": sum(hooks.values()),
                        "command": wall,
                        "statements": statements(log),
                    }
                )
    if list(rounds["base"][0]) != list(rounds["head"][0]):
        raise SystemExit(
            "the two revisions run different hooks: "
            f"base {list(rounds['base'][0])[:-3]}, head {list(rounds['head'][0])[:-3]}"
        )
    figures = {side: medians(rounds[side]) for side in SIDES}
    labels = hook_labels(ROOT)
    print(f"`dbt {' '.join(command)}`, {args.rounds} rounds alternated, medians after the first")
    print(f"{'':44} {'base':>8} {'head':>8} {'head/base':>10}")
    for key in figures["head"]:
        base, head = figures["base"][key], figures["head"][key]
        ratio = f"{head / base:10.2f}" if base else f"{'-':>10}"
        unit = "" if key == "statements" else "s"
        print(f"{labels.get(key, key):44} {base:7.2f}{unit:1} {head:7.2f}{unit:1} {ratio}")
    if args.out:
        args.out.write_text(
            json.dumps({"base": commit, "head": head_commit, "rounds": rounds}, indent=2)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
