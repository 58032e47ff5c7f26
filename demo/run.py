"""`make run`: the demo's first run in one process, so in one JVM.

    python -m demo.run [--patients 200] [--seed 42]

The same three steps a user types, in order, each printing what it prints alone:

    python -m demo.generate --patients 200 --seed 42
    dbt build --target local          # --target warm while the engine (make up) runs
    python -m python_jobs.audit_stream --once

dbt runs in this process (dbtRunner, dbt's documented programmatic entry), on the
`local` target's embedded session; the audit then runs on that same session instead
of starting a second JVM: the build has already opened every table's Delta log and
compiled Spark's hot code, which a new JVM pays again (docs/decisions/0010). While the warm engine is up, dbt uses `--target warm` and the
audit goes to the engine, as typed.
A failed build stops before the audit, with dbt's exit status. dbt's output folders are
its owner's only, as for a `dbt` command (python_jobs.kek_hook).
"""

from __future__ import annotations

import argparse
import os
import sys

from python_jobs.kek_hook import private_dbt_output
from python_jobs.project import package_root, prog, run_job


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=prog("python -m demo.run"), description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--patients", type=int, default=200, help="patients (default 200)")
    parser.add_argument("--seed", type=int, default=42, help="random seed (default 42)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    from demo import generate
    from python_jobs import audit_stream, engine

    code = generate.main(["--patients", str(args.patients), "--seed", str(args.seed)])
    if code:
        return code
    from dbt.cli.main import dbtRunner

    target = "warm" if engine.running() else "local"
    if target == "warm":
        engine.use_token()  # the engine's token, should it have started after this process
    root = str(package_root())
    # the checkout's profiles.yml, as `make run` exports it, unless the caller chose one
    profiles = os.environ.get("DBT_PROFILES_DIR") or root
    build = ["build", "--target", target, "--project-dir", root, "--profiles-dir", profiles]
    private_dbt_output(build)  # as the venv's hook does for a `dbt` process
    result = dbtRunner().invoke(build)
    if not result.success:
        return 1 if result.exception is None else 2
    if target != "local":  # the warm engine: the audit runs there, as typed
        routed = engine.route("python_jobs.audit_stream", ["--once"])
        return routed if routed is not None else audit_stream.main(["--once"])
    from python_jobs.spark import get_spark

    return audit_stream.main(["--once"], get_spark())


if __name__ == "__main__":
    run_job(main, "demo")
