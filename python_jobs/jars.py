"""Delta's JVM jars: fetched once from Maven Central into the local Maven repository.

Spark resolves ``spark.jars.packages`` through Ivy, whose first resolver is the local
Maven repository (~/.m2/repository); once the jars are there a session starts with no
network. The coordinate comes from the dbt profile (the one source of Spark settings)
and must match the installed delta-spark Python package.

The Spark cluster of ``python -m python_jobs.cluster`` also needs Derby's network
server and client (the metastore the Thrift server and the jobs share), at the
version of the Derby that ships in pyspark's jars. Spark's Thrift servers (the warm
engine's and the cluster's) need Hive's hive-llap-common, which Spark 4 stopped shipping,
at the version of pyspark's Hive.

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
from xml.etree import ElementTree

from python_jobs.project import ProjectError, engine_spark_parameters, prog

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


def _profile_settings() -> dict[str, str]:
    return engine_spark_parameters()


def excluded_modules() -> set[str]:
    """``group:name`` of the dependencies Spark ships itself (spark.jars.excludes)."""
    raw = _profile_settings().get("spark.jars.excludes", "")
    return {item.strip() for item in raw.split(",") if item.strip()}


def delta_package() -> Artifact:
    """The delta-spark coordinate of the profile's spark.jars.packages, checked against the pins."""
    packages = _profile_settings()["spark.jars.packages"]
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
    # From Delta 4.1 on the artifact names the Spark it is built for
    # (delta-spark_4.2_2.13); a jar built for another Spark fails at the first query.
    spark = ".".join(version("pyspark").split(".")[:2])
    built_for = delta.name.removeprefix("delta-spark_").split("_")
    if len(built_for) == 2 and built_for[0] != spark:
        raise ProjectError(
            f"profiles.yml asks for {delta.name}, built for Spark {built_for[0]}, but the "
            f"installed pyspark is {version('pyspark')}; use io.delta:delta-spark_{spark}_2.13"
        )
    return delta


def _pom_dependencies(artifact: Artifact) -> list[tuple[Artifact, set[str]]]:
    """Compile and runtime dependencies of a POM in the local repository, with exclusions."""
    pom = artifact.jar.with_suffix(".pom")
    if not pom.is_file():
        return []
    root = ElementTree.parse(pom).getroot()
    ns = {"m": root.tag.partition("}")[0].lstrip("{")} if root.tag.startswith("{") else {}
    q = "m:" if ns else ""
    found = []
    for dep in root.findall(f"./{q}dependencies/{q}dependency", ns):

        def text(tag: str, node: ElementTree.Element = dep) -> str:
            return (node.findtext(f"{q}{tag}", default="", namespaces=ns) or "").strip()

        if text("scope") not in ("", "compile", "runtime") or text("optional") == "true":
            continue
        dep_version = text("version")
        if not dep_version or "$" in dep_version:
            raise ProjectError(
                f"{pom.name}: dependency {text('groupId')}:{text('artifactId')} has no literal "
                f"version ({dep_version or 'none'}); cannot list Delta's jars"
            )
        exclusions = {
            f"{text('groupId', e)}:{text('artifactId', e)}"
            for e in dep.findall(f"./{q}exclusions/{q}exclusion", ns)
        }
        found.append((Artifact(text("groupId"), text("artifactId"), dep_version), exclusions))
    return found


def delta_artifacts() -> list[Artifact]:
    """Every jar Delta needs that Spark does not ship: delta-spark and its dependencies.

    Walks the POMs in the local repository (what Ivy resolves for spark.jars.packages),
    leaving out spark.jars.excludes and each POM's own exclusions. Before `make setup`
    has fetched the POMs, only delta-spark and delta-storage are known.
    """
    delta = delta_package()
    excluded = excluded_modules()
    chosen: dict[str, Artifact] = {}
    queue: list[tuple[Artifact, frozenset[str]]] = [(delta, frozenset())]
    while queue:
        artifact, blocked = queue.pop(0)
        module = f"{artifact.group}:{artifact.name}"
        if (
            module in chosen
            or module in excluded
            or module in blocked
            or f"{artifact.group}:*" in blocked
        ):
            continue
        chosen[module] = artifact
        for child, exclusions in _pom_dependencies(artifact):
            queue.append((child, blocked | exclusions))
    # delta-spark's own dependency: named even before its POM is fetched.
    storage = Artifact("io.delta", "delta-storage", delta.version)
    chosen.setdefault(f"{storage.group}:{storage.name}", storage)
    return list(chosen.values())


def check_excludes() -> None:
    """Each module in spark.jars.excludes must be one Spark ships: else a class goes missing."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    shipped = {p.name for p in jars.glob("*.jar")}
    absent = sorted(
        module
        for module in excluded_modules()
        if not any(name.startswith(module.split(":")[1] + "-") for name in shipped)
    )
    if absent:
        raise ProjectError(
            "profiles.yml spark.jars.excludes leaves out jars Spark does not ship ("
            + ", ".join(absent)
            + f", not in {jars}); remove them from the excludes"
        )


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
    artifacts = require(cluster_artifacts(), "Derby's network jars")
    client = next(a for a in artifacts if a.name == "derbyclient")
    import pyspark

    shared = sorted((Path(pyspark.__file__).parent / "jars").glob("derbyshared-*.jar"))
    return os.pathsep.join(str(p) for p in [client.jar, *shared])


def thrift_server_artifacts() -> list[Artifact]:
    """Hive's hive-llap-common, at the version of pyspark's Hive jars. Spark 4 no longer
    ships it (apache/spark#49736), yet closing a Thrift session can initialize Hive's
    FunctionRegistry (SessionState.close -> Hive.get), whose static initializer needs
    its LlapSigner: without the jar CloseSession fails with NoClassDefFoundError."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    found = sorted(jars.glob("hive-exec-*-core.jar"))
    if not found:
        raise ProjectError(f"no hive-exec-<version>-core.jar in {jars}: is pyspark installed?")
    hive = found[0].name.removeprefix("hive-exec-").removesuffix("-core.jar")
    return [Artifact("org.apache.hive", "hive-llap-common", hive)]


def thrift_server_classpath() -> list[str]:
    """The jars a Spark Thrift server's driver needs beyond Spark's own and Delta's."""
    return [
        str(a.jar) for a in require(thrift_server_artifacts(), "Hive's jars for the Thrift server")
    ]


def missing(artifacts: list[Artifact]) -> list[Artifact]:
    return [artifact for artifact in artifacts if not artifact.jar.is_file()]


def require(artifacts: list[Artifact], what: str) -> list[Artifact]:
    """The artifacts, once each is in the local Maven repository; else stop with what to do."""
    absent = missing(artifacts)
    if absent:
        raise ProjectError(
            f"{what} are not in the local Maven repository ("
            + ", ".join(a.coordinate for a in absent)
            + "); run `make setup` once with network access"
        )
    return artifacts


def require_delta_jars() -> None:
    """Stop with what to do when a jar of Delta's is not in the local Maven repository."""
    require(delta_artifacts(), "Delta's jars")


def fetch(artifacts: list[Artifact], *, transitive: bool = True) -> None:
    """Download with Maven (and, when transitive, the artifacts' dependencies) into
    ~/.m2/repository."""
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
                f"-Dtransitive={str(transitive).lower()}",
            ],
            check=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=prog("python -m python_jobs.jars"),
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--check", action="store_true", help="report only; fetch nothing")
    args = parser.parse_args(argv)
    try:
        check_excludes()
        delta = delta_artifacts()
        # the Thrift server's Hive jar alone: its dependencies are Spark's own jars
        alone = thrift_server_artifacts()
        artifacts = [*delta, *cluster_artifacts()]
        absent = missing(artifacts) + missing(alone)
        if not absent:
            print("Delta jars present: " + ", ".join(a.coordinate for a in delta))
            return 0
        if args.check:
            print("missing: " + ", ".join(a.coordinate for a in absent), file=sys.stderr)
            return 1
        if missing(alone):
            fetch(missing(alone), transitive=False)
        if missing(artifacts):
            fetch(missing(artifacts))
        # the POMs are here now: the whole closure, fetching any dependency still missing
        delta = delta_artifacts()
        artifacts = [*delta, *cluster_artifacts()]
        if missing(artifacts):
            fetch(missing(artifacts))
        artifacts += alone
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
