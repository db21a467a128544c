"""What files a snapshot holds: git's view of the work tree, a commit's tree, or a plain folder.

Every file either becomes a blob (git blob id over its bytes) or is skipped with a reason.
Nothing here writes to the database; the indexer decides what is new.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pix.errors import NotIndexedError, UsageError, git_missing, shown_value
from pix.ingest.redact import unmasked_private_key

DEFAULT_MAX_BYTES = 1 << 20
DB_NAMES = (".pix.db", ".pix.db-wal", ".pix.db-shm", ".pix.db-journal")
NOISE_DIRS = frozenset(
    """.git .hg .svn node_modules .venv venv env .env .tox .nox __pycache__ .mypy_cache
    .pytest_cache .ruff_cache .cache .idea .vscode build dist target out .next .nuxt
    .gradle .terraform site-packages bower_components .eggs""".split()
)
SECRET_NAMES = re.compile(
    r"""(^|/)(\.env(\..*)?|\.envrc|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials
    |id_(rsa|dsa|ecdsa|ed25519)|credentials(\.json)?|secrets?\.(ya?ml|json|toml)
    |.*\.(pem|key|p12|pfx|jks|keystore|kdbx|ovpn))$""",
    re.X | re.I,
)
# `.env.example` and friends document settings; they are not the secrets themselves.
SECRET_EXAMPLES = re.compile(r"\.(example|sample|template|dist)$", re.I)
PRIVATE_KEY = re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")
# An armored block (a key, a certificate), to its END line or the end of the file.
ARMORED = re.compile(
    rb"-----BEGIN [A-Z0-9 ]{1,60}-----.*?(?:-----END [A-Z0-9 ]{1,60}-----|\Z)", re.S
)
# A file holding a private key is a key file, not indexed at all, when armored blocks are at
# least this share of its text (a PEM bundle, a service account's JSON), or when any of its
# key material would escape the masking; otherwise the key is masked like any secret
# (pix/ingest/redact.py), so that a test suite with a key in one template string (hono's
# jwt.test.ts, 1,774 lines) stays searchable.
KEY_FILE_SHARE = 0.5
GENERATED_NAMES = re.compile(
    r"""(^|/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|poetry\.lock|Pipfile\.lock
    |composer\.lock|Gemfile\.lock|Cargo\.lock|uv\.lock|go\.sum)$|\.(min\.(js|css)|map|pb\.go)$
    |_pb2(_grpc)?\.py$""",
    re.X,
)
GENERATED_MARK = re.compile(
    rb"@generated|Code generated .{0,80}DO NOT EDIT|DO NOT EDIT.{0,40}(generated|automatically)"
    rb"|(auto-?generated|generated automatically) (by|from)",
    re.I,
)


@dataclass(frozen=True)
class Entry:
    """A file of the snapshot before its content is looked at."""

    path: str  # repository-relative, '/'-separated
    size: int
    mtime_ns: int = 0  # 0 for files read from git objects
    blob_sha: str | None = None  # known up front for commit trees
    symlink: bool = False
    # A submodule, or a git repository nested in the tree: git lists the folder, not its
    # files. Recorded as skipped, so that status and discover say what was not searched.
    submodule: bool = False


@dataclass(frozen=True)
class Listing:
    root: Path
    kind: str  # 'worktree' | 'commit' | 'folder'
    commit_sha: str | None
    branch: str | None
    entries: list[Entry]
    # Entries git does not compare with the work tree (a sparse checkout's skip-worktree, files
    # marked assume-unchanged): a work tree so listed is no commit's content (pix.index._dirty).
    unvouched: bool = False


def git(root: Path, *args: str, input: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], input=input, capture_output=True, check=False
        )
    except FileNotFoundError:
        raise git_missing() from None
    if done.returncode != 0:
        raise UsageError(f"git {args[0]} failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def git_toplevel(path: Path) -> Path | None:
    done = subprocess.run(
        ["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True, check=False
    )
    if done.returncode != 0:
        refuse_unsafe(path, done.stderr)
        return None
    return Path(os.fsdecode(done.stdout.strip()))  # the file system's name, any bytes


def refuse_unsafe(path: Path, stderr: bytes) -> None:
    """UsageError when git refused a repository another user owns (its safe.directory
    check): read as a plain folder, it would be indexed without its history and called
    changed. pix never overrides the check (such a repository's config can run commands)."""
    if b"dubious ownership" not in stderr:
        return
    lines = stderr.decode(errors="replace").splitlines()
    advice = next((line.strip() for line in lines if "safe.directory" in line), "")
    repository = advice.rpartition("safe.directory ")[2] or str(path)
    raise UsageError(
        f"git refuses to read the repository at {repository}: another user owns it (git's "
        "safe.directory check)",
        hint=f"if you trust it, run `{advice}`" if advice else "see git help config",
    )


def head_sha(root: Path) -> str | None:
    """HEAD's sha; None in a repository with no commit yet."""
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--verify", "-q", "HEAD"],
        capture_output=True,
        check=False,
    )
    return done.stdout.decode().strip() if done.returncode == 0 else None


def head_commit(root: Path) -> tuple[str | None, str | None]:
    """HEAD's sha and branch; (None, None) in a repository with no commit yet."""
    sha = head_sha(root)
    if sha is None:
        return None, None
    branch = (
        subprocess.run(
            ["git", "-C", str(root), "symbolic-ref", "-q", "--short", "HEAD"],
            capture_output=True,
            check=False,
        )
        .stdout.decode()
        .strip()
    )
    return sha, branch or None


def blob_id(data: bytes) -> str:
    """git's blob id of these bytes, as `git hash-object --no-filters` computes it."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def read_original(roots: list[Path], path: str, sha: str) -> str | None:
    """The text of blob `sha` as the repository has it, secrets unmasked (the database holds
    only the masked text): from the first of `roots` whose work tree still has that content at
    `path`, else from the first whose git objects hold the blob (asked of any folder: where
    there is no repository, or git refuses one another user owns, it answers nothing). None
    when none has it (a database copied to another machine)."""
    for root in roots:
        try:
            data = (root / path).read_bytes()
            if blob_id(data) == sha:
                return decode(data)
        except (OSError, UnicodeDecodeError):
            pass
    for root in roots:
        done = subprocess.run(
            ["git", "-C", str(root), "cat-file", "blob", sha], capture_output=True, check=False
        )
        if done.returncode == 0:
            try:
                return decode(done.stdout)
            except UnicodeDecodeError:
                return None
    return None


def is_own_file(path: str, excluded: frozenset[str]) -> bool:
    """pix's own database files: never indexed, never a change to the work tree."""
    return path.rsplit("/", 1)[-1] in DB_NAMES or path in excluded


def _stat_entries(root: Path, paths: Iterator[str], excluded: frozenset[str]) -> list[Entry]:
    entries = []
    # Relative to one open directory: no Path object per file (this runs before every query,
    # for the stale-index check, over every file of the tree).
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    folders: dict[str, object] = {}
    try:
        for rel in paths:
            if is_own_file(rel, excluded):
                continue
            st = _tree_file(rel, top, folders)
            if st is not None:
                is_link = (st.st_mode & 0o170000) == 0o120000
                entries.append(Entry(rel, st.st_size, st.st_mtime_ns, None, is_link))
            elif _real_folder(rel.rstrip("/").rpartition("/")[0], top, folders) is True and (
                _is_repository(rel, top)
            ):
                entries.append(Entry(rel.rstrip("/"), 0, 0, submodule=True))
    finally:
        os.close(top)
    entries.sort(key=lambda e: e.path)
    return entries


CLOSED = object()  # _real_folder: a folder on the way this user may not enter
# What a file behind such a folder stats as: a regular file of size 0 and mtime 0, the same at
# every check until the folder opens.
UNREACHABLE = os.stat_result((0o100000, 0, 0, 0, 0, 0, 0, 0, 0, 0), {"st_mtime_ns": 0})


def _tree_file(rel: str, top: int, folders: dict[str, object]) -> os.stat_result | None:
    """The stat of a regular file or symlink of the tree (not followed); None for a path git
    lists but the work tree no longer has, for submodule directories and other non-files, and
    for a path through a symlinked folder. `folders` caches _real_folder for one listing."""
    folder = _real_folder(rel.rpartition("/")[0], top, folders)
    if folder is CLOSED:
        return UNREACHABLE
    if not folder:
        return None
    try:
        st = os.stat(rel, dir_fd=top, follow_symlinks=False)
    except PermissionError:
        # A folder on its way that this user may not enter (audit): git lists the file, so
        # it is there. Taken for deleted, it left no trace, and discover called its words
        # absent; as an empty file that cannot be read it is skipped `unreadable`.
        return UNREACHABLE
    except OSError:
        return None
    kind = st.st_mode & 0o170000
    return st if kind in (0o100000, 0o120000) else None


def _real_folder(folder: str, top: int, seen: dict[str, object]) -> bool | object:
    """Whether `folder` ('' for the top) is reached without a symlink. git never follows one:
    a tracked file whose folder was replaced by a link (to anywhere, outside the repository
    too) is a deleted file to git, and reading it through the link would index what the
    repository does not hold. CLOSED when a folder on the way cannot be entered by this user:
    whatever lies below is there, unreadable (review: not only one level down)."""
    if not folder:
        return True
    known = seen.get(folder)
    if known is None:
        # The folders above first: a stat of this one goes through them, and through a link
        # among them to a folder this user may not enter it would read as CLOSED (review)
        known = _real_folder(folder.rpartition("/")[0], top, seen)
        if known is True:
            try:
                st = os.stat(folder, dir_fd=top, follow_symlinks=False)
                known = (st.st_mode & 0o170000) == 0o040000
            except PermissionError:
                known = CLOSED
            except OSError:
                known = False
        seen[folder] = known
    return known


def _is_repository(rel: str, top: int) -> bool:
    """Whether git lists `rel` as a repository of its own: an untracked nested repository
    (`--others` lists it as `folder/`), or a submodule, a folder where git tracks a commit:
    checked out (a `.git` inside) or not (empty, and named in .gitmodules). A tracked file
    replaced by a folder is neither: a file gone."""
    if rel.endswith("/"):
        return True
    try:
        folder = os.open(rel, os.O_RDONLY | os.O_DIRECTORY, dir_fd=top)
    except OSError:  # not a folder, or gone
        return False
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    finally:
        os.close(folder)
    return ".git" in names or (not names and rel in _submodule_paths(top))


def _submodule_paths(top: int) -> set[str]:
    """The `path = ...` entries of the tree's .gitmodules (read only for an empty folder
    git lists, which is rare)."""
    try:
        with open(".gitmodules", encoding="utf-8", errors="replace", opener=_at(top)) as fh:
            text = fh.read()
    except OSError:
        return set()
    return set(re.findall(r"^\s*path\s*=\s*(.+?)\s*$", text, flags=re.MULTILINE))


def _at(top: int) -> Callable[[str, int], int]:
    return lambda path, flags: os.open(path, flags, dir_fd=top)


def _size_mtime(rel: str, top: int, folders: dict[str, object]) -> tuple[int, int] | None:
    st = _tree_file(rel, top, folders)
    return None if st is None else (st.st_size, st.st_mtime_ns)


_LS_FILES = ("ls-files", "-z", "--cached", "--others", "--exclude-standard")


def _listed(out: bytes) -> dict[str, None]:
    """git ls-files -z output as paths, in order, each once."""
    return dict.fromkeys(p for p in out.decode("utf-8", "surrogateescape").split("\0") if p)


def _tagged(out: bytes) -> tuple[dict[str, None], bool]:
    """git ls-files -z -v output: its paths, in order, each once, and whether any is tagged
    as an entry git does not compare with the work tree: `S` (a sparse checkout's
    skip-worktree: a file of the commit not in the work tree) or lower case (assume-unchanged:
    edits git status does not show)."""
    records = [r for r in out.split(b"\0") if r]
    unvouched = any(r[:1] == b"S" or r[:1].islower() for r in records)
    paths = dict.fromkeys(r[2:].decode("utf-8", "surrogateescape") for r in records)
    return paths, unvouched


def worktree_stats(
    root: Path, known: Iterable[str], excluded: frozenset[str] = frozenset()
) -> dict[str, tuple[int, int]]:
    """path -> (size, mtime_ns) of exactly the files list_worktree lists, for the check
    before every query. `known` (the snapshot's paths) are stat'ed while git lists the tree in
    its own process, and only what it lists beyond them afterwards: on pylint's 4,293 files
    the check took 78 ms one step after the other (git's listing 22, the stats 18, an Entry a
    file the rest), and git and the stats now overlap (bench/shards_bench.py prints it)."""
    try:
        proc = subprocess.Popen(
            ["git", "-C", str(root), *_LS_FILES], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
    except FileNotFoundError:
        raise git_missing() from None
    listed: list[tuple[bytes, bytes]] = []
    # A thread drains git's pipe meanwhile: a full pipe (64 KiB, ~1,500 paths) would stop it.
    reader = threading.Thread(target=lambda: listed.append(proc.communicate()), daemon=True)
    reader.start()
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    folders: dict[str, object] = {}
    try:
        stats = {path: _size_mtime(path, top, folders) for path in known}
        reader.join()
        out, err = listed[0]
        if proc.returncode != 0:
            raise UsageError(f"git ls-files failed: {err.decode(errors='replace').strip()}")
        now = {}
        for path in _listed(out):
            if is_own_file(path, excluded):
                continue
            stat = stats[path] if path in stats else _size_mtime(path, top, folders)
            if stat is not None:
                now[path] = stat
    finally:
        os.close(top)
    return now


def list_worktree(root: Path, excluded: frozenset[str] = frozenset()) -> Listing:
    """Tracked files plus untracked ones git does not ignore, as they are on disk."""
    sha, branch = head_commit(root)
    paths, unvouched = _tagged(git(root, *_LS_FILES, "-v"))
    entries = _stat_entries(root, iter(paths), excluded)
    return Listing(root, "worktree", sha, branch, entries, unvouched)


def list_folder(root: Path, excluded: frozenset[str] = frozenset()) -> Listing:
    """A folder that is not a git repository: .gitignore files still apply (git reads them
    through a throwaway git dir), and the usual noise folders are left out."""
    with tempfile.TemporaryDirectory(prefix="pix-gitdir-") as gitdir:
        subprocess.run(["git", "init", "-q", "--bare", gitdir], check=True, capture_output=True)
        done = subprocess.run(
            [
                "git",
                f"--git-dir={gitdir}",
                f"--work-tree={root}",
                "-C",
                str(root),
                "ls-files",
                "-z",
                "--others",
                "--exclude-standard",
            ],
            capture_output=True,
            check=False,
        )
    if done.returncode != 0:
        raise UsageError(f"cannot list {root}: {done.stderr.decode(errors='replace').strip()}")
    paths = (
        p
        for p in done.stdout.decode("utf-8", "surrogateescape").split("\0")
        if p and not NOISE_DIRS.intersection(p.split("/")[:-1])
    )
    return Listing(root, "folder", None, None, _stat_entries(root, paths, excluded))


def check_ref(rev: str) -> None:
    """--at takes HEAD, a full sha or a hex prefix; names and expressions are refused (exit 2)."""
    if rev != "HEAD" and not re.fullmatch(r"[0-9a-fA-F]{4,40}", rev):
        raise UsageError(
            f"--at takes HEAD, a full commit sha or a unique hex prefix of 4 digits or more "
            f"(git's shortest), not {shown_value(rev)}",
            hint=_at_hint(rev),
        )


def _at_hint(rev: str) -> str:
    if re.fullmatch(r"[0-9a-fA-F]{1,3}", rev):
        return "give at least 4 digits of the sha"
    if rev.strip() and len(rev) <= 100 and rev.isprintable():
        return f"use `git rev-parse {rev}` to get its sha"
    return "pass a sha"


def resolve_commit(root: Path, rev: str) -> str:
    """The full sha of a ref that passes `check_ref`, through git."""
    check_ref(rev)
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--verify", "-q", f"{rev}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise NotIndexedError(f"no commit {rev!r} in {root}")
    return done.stdout.decode().strip()


def list_commit(root: Path, sha: str) -> Listing:
    """A commit's tree exactly, from git objects; the work tree is not read."""
    out = git(root, "ls-tree", "-r", "-z", "-l", "--full-tree", sha)
    entries = []
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        if not record:
            continue
        meta, path = record.split("\t", 1)
        mode, kind, blob, size = meta.split()
        if kind == "commit":  # a submodule: its files are in another repository
            entries.append(Entry(path, 0, 0, submodule=True))
            continue
        if kind != "blob":
            continue
        # git prints BAD for a blob this clone does not hold (a partial or filtered clone, an
        # absent large file): it is listed with size 0 and read_blobs reports it missing.
        entries.append(Entry(path, int(size) if size.isdigit() else 0, 0, blob, mode == "120000"))
    return Listing(root, "commit", sha, None, entries)


def read_blobs(root: Path, shas: list[str]) -> Iterator[tuple[str, bytes | None]]:
    """Contents of git objects, through one `git cat-file --batch`, in the order asked; None
    for an object the repository does not hold (the file is then skipped as unreadable)."""
    if not shas:
        return
    proc = subprocess.Popen(
        ["git", "-C", str(root), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin and proc.stdout

    # Writing everything first could deadlock on a full stdout pipe, so feed from a thread.
    def feed() -> None:
        for sha in shas:
            proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.close()

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        for sha in shas:
            header = proc.stdout.readline().split()
            if len(header) < 3:  # "<sha> missing"
                yield sha, None
                continue
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)
            yield sha, data
    finally:
        feeder.join()
        proc.stdout.close()
        proc.wait()


# Text in UTF-16 or UTF-32, told by its byte-order mark. Its NUL bytes would call it binary,
# but it is text pix cannot read: discover must call a search of it partial, not absent.
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


def skip_reason(path: str, data: bytes) -> str | None:
    """Why a file's content is not indexed, or None. Size and symlinks are decided before
    reading; this looks at the name and the bytes."""
    if SECRET_NAMES.search(path) and not SECRET_EXAMPLES.search(path):
        return "secret"
    if data.startswith(_WIDE_BOMS):
        return "not_text"
    head = data[:8192]
    if b"\0" in head:
        return "binary"
    if _key_file(data):
        return "secret"
    if GENERATED_NAMES.search(path) or GENERATED_MARK.search(data[:1024]):
        return "generated"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "not_text"  # no NUL byte, but not UTF-8 either (Latin-1 text, say)
    if _minified(text):
        return "minified"
    return None


def _key_file(data: bytes) -> bool:
    """A private key, alone or with what belongs with it (certificates, a few fields), or a
    file whose key the masking would not cover."""
    if not PRIVATE_KEY.search(data):
        return False
    armored = sum(m.end() - m.start() for m in ARMORED.finditer(data))
    if armored >= KEY_FILE_SHARE * len(data.strip()):
        return True
    return unmasked_private_key(data.decode("utf-8", "replace"))


def _minified(text: str) -> bool:
    """Minified or machine-packed text: few lines, very long ones."""
    if len(text) < 2000:
        return False
    return len(text) / (text.count("\n") + 1) > 300


def decode(data: bytes) -> str:
    """File bytes as text with '\n' line ends (CRLF and lone CR folded), BOM dropped."""
    text = data.decode("utf-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text
