"""`pix index --workspace W [--ray [ADDRESS]]`: its options' checks and its output (the work is
pix/cluster.py's)."""

from __future__ import annotations

from pathlib import Path

import typer

from pix.errors import UsageError
from pix.progress import Progress

LOCAL = "local"  # pix.cluster.LOCAL (not imported here: `pix --help` should not load numpy)


def optional_ray_address(argv: list[str]) -> list[str]:
    """`pix index ... --ray` with no address (the last argument, or an option next) means a
    local Ray instance; typer's options cannot take an optional value, so it is spelled in."""
    if not argv or argv[0] != "index":
        return argv
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--":
            break
        if arg == "--ray" and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out[i] = f"--ray={LOCAL}"
    return out


def index_workspace_command(
    workspace: Path | None,
    ray: str | None,
    ray_cpus: int | None,
    path: Path | None,
    db: Path | None,
    at: str | None,
    rebuild: bool,
    max_bytes: int,
    static_only: bool,
    progress: Progress,
    as_json: bool,
    quiet: bool,
) -> None:
    if workspace is None:
        raise UsageError("--ray needs --workspace (the repositories to index)")
    given = [name for name, value in (("PATH", path), ("--db", db), ("--at", at)) if value]
    if rebuild:
        given.append("--rebuild")
    if given:
        raise UsageError(f"--workspace is exclusive with {', '.join(given)}")
    if ray_cpus is not None and ray != LOCAL:
        raise UsageError("--ray-cpus sizes a local Ray instance: give it with --ray alone")
    from pix.cli_io import emit_json
    from pix.cluster import index_workspace
    from pix.output.render import index_summary
    from pix.workspace import load_workspace

    report = index_workspace(
        load_workspace(workspace), ray, ray_cpus, max_bytes, not static_only, progress
    )
    if as_json:
        emit_json(report.describe())
        return
    if quiet:
        return
    for repo in report.repos:
        typer.echo(f"{repo['name']}: {index_summary(repo['report'])}", err=True)
    if report.ray is not None:
        typer.echo(
            f"ray ({report.ray}, {report.workers} CPUs): {report.wanted} inputs wanted, "
            f"{report.shared} of them by several repositories, {report.copied} copied from "
            f"another database, {report.inputs} sent to the cluster, {report.embedded} "
            f"embedded there, {report.swept} after",
            err=True,
        )
