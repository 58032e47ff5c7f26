"""Delta's JVM jars: fetched once from Maven Central into the local Maven repository.

Spark resolves ``spark.jars.packages`` through Ivy, whose first resolver is the local
Maven repository (~/.m2/repository); once the jars are there a session starts with no
network. The coordinate comes from the dbt profile (the one source of Spark settings)
and must match the installed delta-spark Python package.

The Spark cluster of ``python -m python_jobs.cluster`` also needs Derby's network
server and client (the metastore the Thrift server and the jobs share), at the
version of the Derby that ships in pyspark's jars.

    python -m python_jobs.jars            # fetch what is missing (no-op when present)
    python -m python_jobs.jars --check    # exit 1 if anything is missing, fetch nothing
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from python_jobs.project import ProjectError, profile_target

# Spark's Ivy "local-m2-cache" resolver reads exactly this folder.
M2_REPOSITORY = Path.home() / ".m2" / "repository"


@dataclass(frozen=True)
class Artifact:
    group: str
    name: str
    version: str

    @property
    def coordinate(self) -> str:
        return f"{self.group}:{self.name}:{self.version}"

    @property
    def jar(self) -> Path:
        folder = M2_REPOSITORY.joinpath(*self.group.split("."), self.name, self.version)
        return folder / f"{self.name}-{self.version}.jar"


def delta_artifacts() -> list[Artifact]:
    """The jars the profile's spark.jars.packages asks for, checked against the pins."""
    packages = profile_target("local")["server_side_parameters"]["spark.jars.packages"]
    artifacts = [Artifact(*coordinate.strip().split(":")) for coordinate in packages.split(",")]
    delta = next((a for a in artifacts if a.name.startswith("delta-spark_")), None)
    if delta is None:
        raise ProjectError("profiles.yml spark.jars.packages does not name io.delta:delta-spark")
    installed = version("delta-spark")
    if delta.version != installed:
        raise ProjectError(
            f"profiles.yml asks for Delta jars {delta.version} but the installed delta-spark "
            f"Python package is {installed}; set both to the same version"
        )
    # delta-spark's own dependency, resolved by Ivy from the same repository.
    return [*artifacts, Artifact("io.delta", "delta-storage", delta.version)]


def cluster_artifacts() -> list[Artifact]:
    """Derby's network server and client, the version pyspark's embedded Derby has."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    found = sorted(jars.glob("derby-*.jar"))
    if not found:
        raise ProjectError(f"no derby-<version>.jar in {jars}: is pyspark installed?")
    derby = found[0].name.removeprefix("derby-").removesuffix(".jar")
    return [Artifact("org.apache.derby", name, derby) for name in ("derbynet", "derbyclient")]


def derby_client_classpath() -> str:
    """The jars a Spark driver needs to reach the Derby network metastore."""
    artifacts = cluster_artifacts()
    absent = missing(artifacts)
    if absent:
        raise ProjectError(
            "Derby's network jars are not in the local Maven repository ("
            + ", ".join(a.coordinate for a in absent)
            + "); run `make setup` once with network access"
        )
    client = next(a for a in artifacts if a.name == "derbyclient")
    import pyspark

    shared = sorted((Path(pyspark.__file__).parent / "jars").glob("derbyshared-*.jar"))
    return os.pathsep.join(str(p) for p in [client.jar, *shared])


def missing(artifacts: list[Artifact]) -> list[Artifact]:
    return [artifact for artifact in artifacts if not artifact.jar.is_file()]


def fetch(artifacts: list[Artifact]) -> None:
    """Download with Maven (and the artifacts' dependencies) into ~/.m2/repository."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise ProjectError(
            "Maven (mvn) is needed once to fetch Delta's jars from Maven Central; "
            "install it (e.g. apt-get install maven) and run `make setup` again"
        )
    for artifact in artifacts:
        print(f"fetching {artifact.coordinate} into {M2_REPOSITORY}", flush=True)
        subprocess.run(
            [
                mvn,
                "--batch-mode",
                "--quiet",
                f"-Dmaven.repo.local={M2_REPOSITORY}",
                "dependency:get",
                f"-Dartifact={artifact.coordinate}",
            ],
            check=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m python_jobs.jars",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--check", action="store_true", help="report only; fetch nothing")
    args = parser.parse_args(argv)
    try:
        delta = delta_artifacts()
        artifacts = [*delta, *cluster_artifacts()]
        absent = missing(artifacts)
        if not absent:
            print("Delta jars present: " + ", ".join(a.coordinate for a in delta))
            return 0
        if args.check:
            print("missing: " + ", ".join(a.coordinate for a in absent), file=sys.stderr)
            return 1
        fetch(absent)
        still = missing(artifacts)
        if still:
            raise ProjectError(
                "Maven ran but these jars are still missing: "
                + ", ".join(str(a.jar) for a in still)
            )
        print("Delta jars present: " + ", ".join(a.coordinate for a in delta))
        return 0
    except (ProjectError, subprocess.CalledProcessError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
