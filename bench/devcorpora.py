"""Corpora of the development sets: public git repositories at pinned commits, in a cache.

Nothing here is committed to pix. A repository comes from a mirrors folder laid out as
`<owner>+<name>/repo` (a bare git directory, the layout the session's fetch tool makes), named
by `--mirrors DIR` or `$PIX_BENCH_MIRRORS`; without one it is `git clone --bare`d from GitHub
into `$PIX_BENCH_CACHE/mirrors/` once. From there:

    snapshot(repo, sha) -> Path   # a one-commit git repository holding the tree of `sha`
    clone(repo) -> Path           # a no-checkout clone with the real history (for `--at`)
    database(name) -> Path        # where the set's .pix.db is cached (per model and indexer)

A snapshot is committed by `bench` with a fixed date (as bench/corpora.py does for sdists), so
its commit sha is the same on every machine.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from bench.corpora import _GIT_ENV, MARKER, _git, _lock, cache_dir

_MIRRORS: Path | None = None


def set_mirrors(folder: str | None) -> None:
    """Use `folder` (layout <owner>+<name>/repo) before $PIX_BENCH_MIRRORS and the cache."""
    global _MIRRORS
    _MIRRORS = Path(folder).expanduser() if folder else None


def _mirror_roots() -> list[Path]:
    roots = [_MIRRORS] if _MIRRORS else []
    if os.environ.get("PIX_BENCH_MIRRORS"):
        roots.append(Path(os.environ["PIX_BENCH_MIRRORS"]).expanduser())
    return [*roots, cache_dir() / "mirrors"]


def mirror(repo: str) -> Path:
    """The bare git directory of `owner/name`, cloned from GitHub on first use."""
    key = repo.replace("/", "+")
    for root in _mirror_roots():
        candidate = root / key / "repo"
        if (candidate / "HEAD").exists():
            return candidate
    target = cache_dir() / "mirrors" / key / "repo"
    target.parent.mkdir(parents=True, exist_ok=True)
    with _lock(target.parent / ".clone.lock"):
        if not (target / "HEAD").exists():
            tmp = target.parent / "repo.partial"
            if tmp.exists():
                shutil.rmtree(tmp)
            url = f"https://github.com/{repo}"
            cloned = subprocess.run(["git", "clone", "--bare", "--quiet", url, str(tmp)])
            if cloned.returncode != 0:
                # A machine without GitHub (CI, a sandbox) needs the mirror handed to it.
                where = ", ".join(str(root / key / "repo") for root in _mirror_roots())
                raise SystemExit(
                    f"bench: no mirror of {repo} and cannot clone {url}; put a bare clone at "
                    f"one of {where}, or pass --mirrors DIR / set $PIX_BENCH_MIRRORS"
                )
            tmp.rename(target)
    return target


def has_commit(repo: str, sha: str) -> bool:
    done = subprocess.run(
        ["git", "--git-dir", str(mirror(repo)), "cat-file", "-e", f"{sha}^{{commit}}"],
        capture_output=True,
    )
    return done.returncode == 0


def git_out(git_dir: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], capture_output=True, check=True, text=True
    ).stdout


def commit_tree(tree: Path, message: str) -> None:
    """Make `tree` a git repository of one commit holding every file in it, ignore rules or
    not (a snapshot's tree as committed; bench.onedb_bench's trees side by side)."""
    _git(tree, "init", "-q")
    _git(tree, "add", "-A", "-f")
    _git(
        tree,
        "-c", "user.name=bench", "-c", "user.email=bench@localhost",
        "-c", "commit.gpgsign=false",
        "commit", "-qm", message, "--no-verify", "--allow-empty",
    )  # fmt: skip


def snapshot(repo: str, sha: str, folder: str | None = None) -> Path:
    """A one-commit git repository whose tree is exactly `sha`'s tree in `repo` (or, given
    `folder`, only that folder of it, at its place in the tree)."""
    name = f"{repo.replace('/', '+')}-{sha[:12]}"
    if folder:  # a folder's own snapshot: its path in the name, and a hash (a/b is not a+b)
        part = folder.strip("/")
        name += f"-{part.replace('/', '+')}-{hashlib.sha1(part.encode()).hexdigest()[:6]}"
    target = cache_dir() / "snapshots" / name
    if (target / ".git" / MARKER).exists():
        return target
    source = mirror(repo)
    if not has_commit(repo, sha):
        raise RuntimeError(f"{repo}: commit {sha} is not in {source}")
    target.parent.mkdir(parents=True, exist_ok=True)
    with _lock(target.parent / f".{target.name}.lock"):
        if (target / ".git" / MARKER).exists():
            return target
        with tempfile.TemporaryDirectory(prefix=f".{target.name}-", dir=target.parent) as tmp:
            tree = Path(tmp) / "tree"
            tree.mkdir()
            write_tree(source, sha, tree, folder)
            where = f"{repo}@{sha}" + (f":{folder}" if folder else "")
            commit_tree(tree, where)
            (tree / ".git" / MARKER).write_text(f"{where}\n")
            if target.exists():
                shutil.rmtree(target)
            tree.rename(target)
    return target


def write_tree(git_dir: Path, sha: str, tree: Path, folder: str | None = None) -> None:
    """Commit `sha`'s files (or those of its `folder`, at their paths), as committed, into the
    folder `tree`: read-tree + checkout-index into a private index, so no export-ignore or
    export-subst rewriting (git archive would apply both) and no work tree or index of
    `git_dir` touched."""
    part = folder.strip("/") if folder else ""
    read = ["read-tree", f"--prefix={part}/", f"{sha}:{part}"] if part else ["read-tree", sha]
    # Blobs the mirror lacks are left out, as pix and the baselines read nothing there.
    missing = [p for p in absent_blobs(git_dir, sha) if not part or p.startswith(part + "/")]
    tree.mkdir(parents=True, exist_ok=True)  # update-index wants its work tree to exist
    with tempfile.TemporaryDirectory(prefix=".index-") as scratch:
        env = {**os.environ, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
        steps = [read, ["checkout-index", "-a", "-f"]]
        if missing:
            steps.insert(1, ["update-index", "--force-remove", "-z", "--stdin"])
        for args in steps:
            subprocess.run(
                ["git", "--git-dir", str(git_dir), "--work-tree", str(tree), *args],
                env=env, check=True, capture_output=True,
                input=b"\0".join(map(os.fsencode, missing)) if "--stdin" in args else None,
            )  # fmt: skip


def clone(repo: str) -> Path:
    """A no-checkout clone of the mirror with its whole history (objects hard-linked), so
    `pix index --at SHA` can read any commit without touching a work tree."""
    target = cache_dir() / "clones" / repo.replace("/", "+")
    if (target / ".git" / MARKER).exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _lock(target.parent / f".{target.name}.lock"):
        if not (target / ".git" / MARKER).exists():
            if target.exists():
                shutil.rmtree(target)
            subprocess.run(
                ["git", "clone", "--no-checkout", "--quiet", str(mirror(repo)), str(target)],
                check=True,
                env={**os.environ, **_GIT_ENV},
            )
            (target / ".git" / MARKER).write_text(f"{repo}\n")
    return target


def absent_blobs(git_dir: Path, sha: str) -> list[str]:
    """The paths of commit `sha` whose blobs the object store lacks (ls-tree's size is BAD: a
    fetched snapshot may list its largest files without their content), as the file system
    names them (a name that is not UTF-8 kept by surrogate escapes)."""
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-l", "-z", sha],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    return [
        os.fsdecode(path)
        for meta, _, path in (rec.partition(b"\t") for rec in listing.split(b"\0") if rec)
        if meta.split()[3:4] == [b"BAD"]
    ]


def complete_commit(root: Path, sha: str) -> str:
    """`sha`, or if some of its blobs are absent from the stored objects (a fetched snapshot
    may list its largest files without their content), a commit of the same tree minus those
    files, made once with a fixed author and date (so the same sha everywhere) and kept under
    refs/bench/. The absent files are large data files that pix would skip as too large."""
    absent = absent_blobs(root / ".git", sha)
    if not absent:
        return sha
    ref = f"refs/bench/complete-{sha}"
    known = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--verify", "-q", ref], capture_output=True, text=True
    )
    if known.returncode == 0:
        return known.stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, **_GIT_ENV, "GIT_INDEX_FILE": str(Path(tmp) / "index")}

        def run(*args: str, data: str | None = None) -> str:
            return subprocess.run(
                ["git", "-C", str(root), *args], env=env, input=data, capture_output=True,
                check=True, text=True,
            ).stdout.strip()  # fmt: skip

        run("read-tree", sha)
        run("update-index", "--force-remove", "-z", "--stdin", data="\0".join(absent) + "\0")
        tree = run("write-tree")
        message = f"{sha} without {len(absent)} absent blob(s): {', '.join(absent)}"
        commit = run("commit-tree", tree, "-p", sha, "-m", message)
        run("update-ref", ref, commit)
    return commit


def model_key() -> str:
    """A short name for the embedding model a database was built with (its identity hash)."""
    from pix.ingest.embed import model_identity

    blob = json.dumps(model_identity(), sort_keys=True).encode()
    return hashlib.sha1(blob).hexdigest()[:10]


# pix/ingest modules that decide no chunk: the transformer is keyed by model_key, and a static
# table change is caught by the database's static identity (devbench.refresh_static_tier).
# Sources that do not decide a chunk: the embedders, the history prior's counts, the log
# channel's commits and the migrations that added their tables (a cached database gains them
# when opened).
NOT_CHUNKER = frozenset(
    {"embed.py", "static.py", "history.py", "commit_log.py"}
    | {"008_recent_commits.sql", "011_commit_log.sql", "012_log_rule.sql"}
)


@functools.cache
def indexer_key() -> str:
    """A short hash of what decides a database's chunks: pix/ingest's sources, the migrations
    and the installed tree-sitter wheels. An index does not rechunk a blob it already holds, so
    a database cached by another chunker would be measured as if it were this one's. Read
    once a process, and handed by a bench to its workers (use_indexer_key): a source edited
    while a bench runs would otherwise file the running code's databases under the edited
    code's key."""
    import importlib.metadata

    import pix

    top = Path(pix.__file__).resolve().parent
    digest = hashlib.sha1(pix.__version__.encode())
    sources = [(top / "ingest", "*.py"), (top / "migrations", "*.sql")]
    sources.append((top.parent / "migrations", "*.sql"))  # a checkout keeps them at the top
    for folder, pattern in sources:
        for path in sorted(folder.glob(pattern)):
            if path.name in NOT_CHUNKER:
                continue
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    wheels = sorted(
        f"{dist.metadata['Name']}=={dist.version}"
        for dist in importlib.metadata.distributions()
        if (dist.metadata["Name"] or "").lower().replace("_", "-").startswith("tree-sitter")
    )
    digest.update("\n".join(wheels).encode())
    return digest.hexdigest()[:10]


_KEY: str | None = None  # a bench worker's parent's key (use_indexer_key)


def use_indexer_key(key: str | None) -> None:
    """File databases under `key`, a bench's parent process's indexer key: a worker started
    by spawn or forkserver would read the sources again, edited perhaps since the parent
    started (its code is the parent's: imported before the edit, or the same files)."""
    global _KEY
    _KEY = key


def database(name: str, variant: str = "") -> Path:
    """The cached database of one corpus, for the current model and indexer (`variant`: a
    separate cache, e.g. "-static" for databases indexed with --static-only)."""
    folder = cache_dir() / "devdbs" / f"{model_key()}-{_KEY or indexer_key()}{variant}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{name}.db"


# Every (embed key, transformer vector) of a database: inputs are keyed by what the model
# reads, so an identical key is an identical vector whatever chunker cut the text.
KNOWN_VECTORS = """
SELECT c.embed_key, min(v.embedding) FROM chunk c JOIN chunk_vec v ON v.chunk_id = c.id
GROUP BY c.embed_key
"""
# The chunks of a database that lack a transformer vector, with their embed keys.
WITHOUT_VECTOR = """
SELECT c.id, c.embed_key FROM chunk c
WHERE NOT EXISTS (SELECT 1 FROM chunk_vec v WHERE v.chunk_id = c.id)
"""


def seed_vectors(db: Path, name: str) -> int:
    """Give `db`'s chunks the transformer vectors that the same corpus's databases cached by
    other indexers already hold for the same inputs (same model: the folder's model key), so
    that a chunker change re-embeds only the texts it changed. One transaction; returns how
    many chunks got a vector. What `pix index` would compute for them is exactly this: each
    input is run alone, so its vector depends on its text only."""
    from pix.store import open_store, sql

    own = db.parent
    others = sorted(
        p / name
        for p in own.parent.glob(f"{model_key()}-*")
        if p != own and not p.name.endswith("-static") and (p / name).exists()
    )
    if not others:
        return 0
    known: dict[int, bytes] = {}
    for other in others:
        with open_store(str(other), create=False) as store:
            for key, vector in store.conn.execute(KNOWN_VECTORS):
                known.setdefault(key, vector)
    with open_store(str(db), create=False) as store:
        conn = store.conn
        with store.write():
            todo = [(cid, known[key]) for cid, key in conn.execute(WITHOUT_VECTOR) if key in known]
            conn.executemany(sql.INSERT_VECTOR, todo)
            conn.executemany(sql.DELETE_STATIC_VECTOR, ((cid,) for cid, _ in todo))
    return len(todo)
