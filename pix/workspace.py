"""A workspace: named repositories (or bare databases) that one question can span.

The file is `pix.toml` (or `.pix-workspace.json`, the same shape in JSON):

    [[repo]]
    name = "api"             # optional; defaults to the folder's (or database's) name
    path = "services/api"    # a repository folder; its database is <path>/.pix.db ...
    db = "/data/api.pix.db"  # ... unless `db` names one (a bare `db` needs no folder)
    host = "build-2"         # optional: the machine that owns the folder and writes the
                             # database (`pix index --ray`); default: the one running pix

Relative paths are relative to the workspace file, so a workspace can be copied with its
repositories. Names are unique, because results and the MCP `repos` argument use them.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pix.errors import UsageError

WORKSPACE_FILES = ("pix.toml", ".pix-workspace.json")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True)
class Shard:
    """One repository of a workspace: its name, its folder (None for a bare database) and
    the database file that answers for it."""

    name: str
    root: Path | None
    db: Path
    host: str | None = None  # the machine owning root and db (pix/cluster.py); None: this one

    def where(self) -> dict:
        """How to open it as one repository: its database, and the folder pix runs in, the
        database's own for a bare database, which is then no work tree of it (tree_here)."""
        folder = self.root or self.db.parent
        return {"db": str(self.db), "cwd": str(folder), "tree_here": self.root is not None}


@dataclass(frozen=True)
class Workspace:
    source: Path | None  # the file it was read from; None when built from --db options
    shards: tuple[Shard, ...]

    def names(self) -> list[str]:
        return [shard.name for shard in self.shards]

    def select(self, names: list[str] | None) -> Workspace:
        """The shards named (in the workspace's order); all of them for None or []."""
        if not names:
            return self
        unknown = sorted(set(names) - set(self.names()))
        if unknown:
            raise UsageError(
                f"no repository named {', '.join(unknown)} in the workspace",
                hint=f"known: {', '.join(self.names())}",
            )
        wanted = set(names)
        return Workspace(self.source, tuple(s for s in self.shards if s.name in wanted))


def find_workspace_file(path: str | Path) -> Path:
    """`path` itself when it is a file, else the workspace file inside the folder `path`."""
    path = Path(path).expanduser()
    if path.is_file():
        return path
    if path.is_dir():
        for name in WORKSPACE_FILES:
            if (path / name).is_file():
                return path / name
        raise UsageError(f"no {' or '.join(WORKSPACE_FILES)} in {path}")
    raise UsageError(f"no such workspace file: {path}")


def load_workspace(path: str | Path) -> Workspace:
    """Read and check a workspace file (pix.toml or .pix-workspace.json)."""
    source = find_workspace_file(path)
    try:
        text = source.read_text(encoding="utf-8")
        data = json.loads(text) if source.suffix == ".json" else tomllib.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"workspace {source} is not valid: {exc}") from None
    except RecursionError:  # json's decoder recurses once per nested array or object
        raise UsageError(f"workspace {source} nests arrays or objects too deeply") from None
    entries = data.get("repo") if isinstance(data, dict) else None
    if entries is not None and not isinstance(entries, list):
        raise UsageError(
            f"workspace {source}: repo must be a list of entries, not a {type(entries).__name__}",
            hint='[[repo]] tables in TOML, "repo": [{"path": ...}] in JSON',
        )
    if not entries:
        raise UsageError(f"workspace {source} lists no [[repo]] entries")
    base = source.parent.resolve()
    return Workspace(source.resolve(), _shards(entries, base, str(source)))


def from_databases(dbs: list[str]) -> Workspace:
    """The workspace that `--db A --db B ...` means: each database named after its file (or
    its repository folder, for a default `.pix.db`)."""
    entries = [{"db": db} for db in dbs]
    return Workspace(None, _shards(entries, Path.cwd(), "--db"))


def _shards(entries: list, base: Path, where: str) -> tuple[Shard, ...]:
    shards: list[Shard] = []
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or not ({"path", "db"} & entry.keys()):
            raise UsageError(f"{where}: entry {number} needs a `path` or a `db`")
        extra = sorted(set(entry) - {"name", "path", "db", "host"})
        if extra:
            raise UsageError(f"{where}: entry {number} has unknown keys {', '.join(extra)}")
        root = _resolve(base, entry["path"]) if "path" in entry else None
        db = _resolve(base, entry["db"]) if "db" in entry else root / ".pix.db"
        name = entry.get("name") or _default_name(root, db)
        if not isinstance(name, str) or not NAME.match(name):
            raise UsageError(
                f"{where}: entry {number} has the name {name!r}",
                hint="a name starts with a letter or digit, then letters, digits, '.', '_' "
                "and '-'; give the entry a `name` that does",
            )
        host = entry.get("host")
        if host is not None and (not isinstance(host, str) or not host):
            raise UsageError(f"{where}: entry {number} has the host {host!r}")
        shards.append(Shard(name, root, db, host))
    named: dict[Path, str] = {}  # database -> the name it was given first
    from_files = where == "--db"  # --db names each database after its file: no `name` there
    for shard in shards:
        if shard.db in named:  # one file twice: every answer would come twice
            first = named[shard.db]
            what = (
                f"the database {shard.db} is given twice"
                if first == shard.name
                else f"{first} and {shard.name} are one database, {shard.db}"
            )
            raise UsageError(
                f"{where}: {what}", hint="give it once" if from_files else "list it once"
            )
        if shard.name in named.values():
            raise UsageError(
                f"{where}: two repositories are named {shard.name}",
                hint="use a workspace file to name each" if from_files else "give each a `name`",
            )
        named[shard.db] = shard.name
    return tuple(shards)


def _resolve(base: Path, value: object) -> Path:
    if not isinstance(value, str) or not value:
        raise UsageError(f"a workspace path must be a non-empty string, not {value!r}")
    return (base / Path(value).expanduser()).resolve()


def _default_name(root: Path | None, db: Path) -> str:
    """The folder's or the file's name, made a valid name: `--db` cannot give one, so
    `my repo/.pix.db` is `my-repo` and `.hidden/.pix.db` is `hidden`."""
    if root is not None:
        raw = root.name
    elif db.name == ".pix.db":
        raw = db.parent.name
    else:
        raw = db.name.removesuffix(".db").removesuffix(".pix")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", raw).lstrip("._-")[:100]
    return name or raw


def workspace_from(workspace: str | None, dbs: list[str] | None) -> Workspace | None:
    """The workspace that `--workspace W` or several `--db` name; None for one database
    (the single-repository path, unchanged)."""
    if workspace is not None and dbs:
        raise UsageError("--workspace and --db are exclusive: list the databases in W")
    if workspace is not None:
        return load_workspace(workspace)
    if dbs and len(dbs) > 1:
        return from_databases(dbs)
    return None
