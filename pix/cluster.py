"""`pix index --workspace W [--ray [ADDRESS]]`: every repository of a workspace, the
transformer's work spread over a Ray cluster.

Without --ray the repositories are indexed one after the other, each exactly as `pix index`
indexes it. With --ray (the optional extra: pip install 'pix[cluster]'):

- Ownership. A repository's folder and database belong to one machine: its workspace entry's
  `host` (a Ray node's hostname or IP address), by default the machine running pix. On each
  owning machine two Ray actors pinned to its node (a hard node affinity) do all the reading
  and writing: a Preparer runs the keyword and static phases of `pix index`, repository by
  repository, and hands back the inputs still to embed; a Writer keeps each database open,
  claims leases and writes vectors. Databases never leave their machine: only texts and
  vectors travel. In local mode every repository is on this machine.
- Content addressing. An input is its embed key (sha1 of what the model reads,
  pix.store.content.embed_key), the same in every database: the driver keeps one entry per key
  for the whole workspace, so a text found in several repositories runs through the model
  once and is written to each of them.
- Work. Blocks of at most BLOCK_INPUTS inputs (BLOCK_CHARS characters) are Ray tasks of one
  CPU each, run by a single-threaded model in each worker process: every text runs alone, as
  in `pix index`, so the vectors are the same bytes. Embedding starts once the first
  repository is prepared, while the next ones are.
- Leases and interrupts. Before a block runs, the Writer claims its inputs in each database
  that needs them (pix/store/lease.py; the owner is the Writer's process), so inputs a
  concurrent `pix index` holds are left to it. A block's vectors go to each database in one
  transaction together with the release of their leases. Ctrl-C (or a kill) shuts Ray down:
  every database keeps what was committed, the dead Writer's leases are taken over at once on
  its host (by anyone 30 s later), and the next run embeds only what is left.
- The end. Each Writer runs `embed_pending` once more on each of its databases, which waits
  for inputs another pix was embedding (or embeds what nobody did), so that every chunk has its
  vector when this returns.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pix import interrupt
from pix.errors import PixError, UsageError, as_pix_error
from pix.index import index_repository
from pix.ingest import scan
from pix.ingest.embed import Embedder, quantize
from pix.ingest.vectors import copy_known_vectors, embed_pending, write_vectors
from pix.progress import Progress
from pix.schemas import json_name
from pix.store import Store, content, open_store, sql
from pix.store.lease import Leases
from pix.workspace import Shard, Workspace

CLUSTER_HINT = "pip install 'pix[cluster]'"
LOCAL = "local"  # --ray without an address: Ray's own name for a new instance on this machine
BLOCK_INPUTS = 128  # as pix.ingest.vectors.CLAIM_INPUTS: a few seconds of one worker's time
BLOCK_CHARS = 128 * 600
IN_FLIGHT = 2  # blocks per worker submitted ahead, so no worker waits for the driver
WAIT_SECONDS = 0.5
# Ctrl-C: Ray's shutdown (stopping its processes) takes a second or two; pix.interrupt's
# default grace would cut it short and leave them running.
SHUTDOWN_GRACE = 20.0
PROBE_SECONDS = 5.0
SCHEMA_VERSION = 1
# One vector per input (a JSON array of embed keys) that some chunk of this database has.
VECTORS_FOR_KEYS = """
SELECT c.embed_key, min(v.embedding)
FROM chunk c JOIN chunk_vec v ON v.chunk_id = c.id
WHERE c.embed_key IN (SELECT value FROM json_each(?))
GROUP BY c.embed_key
"""


@dataclass
class WorkspaceReport:
    repos: list[dict]  # {name, report}: each repository's `pix index` report
    skipped: dict[str, str]  # repository -> why it was not indexed
    ray: str | None = None  # the address, `local`, or None without --ray
    workers: int = 0  # CPUs of the Ray cluster (embedding tasks at once)
    wanted: int = 0  # (repository, input) pairs that lacked a vector after the static phase
    shared: int = 0  # distinct inputs wanted by more than one repository
    copied: int = 0  # inputs whose vector another database of the workspace already had
    inputs: int = 0  # distinct inputs sent to the cluster: what content addressing left
    embedded: int = 0  # inputs run through the model on the cluster
    swept: int = 0  # inputs the last pass embedded (left by another pix, or unclaimed)
    seconds: dict[str, float] = field(default_factory=dict)

    def describe(self) -> dict:
        fields = {json_name(k): v for k, v in self.__dict__.items()}
        return {"schemaVersion": SCHEMA_VERSION, **fields}


def import_ray():
    """Ray, or the one-line error saying how to get it (exit 2)."""
    try:
        import ray
    except ImportError:
        raise UsageError(
            f"--ray needs the cluster extra, which is not installed: {CLUSTER_HINT}"
        ) from None
    return ray


def index_workspace(
    workspace: Workspace,
    ray_address: str | None = None,
    cpus: int | None = None,
    max_bytes: int = scan.DEFAULT_MAX_BYTES,
    embed: bool = True,
    progress: Progress | None = None,
) -> WorkspaceReport:
    """Index every repository of the workspace: one by one, or with `ray_address` (LOCAL for a
    local Ray instance of `cpus` CPUs) their embedding spread over a Ray cluster."""
    progress = progress or Progress(enabled=False)
    ray = import_ray() if ray_address is not None else None
    shards, skipped = _indexable(workspace, ray is not None and embed)
    for name, why in skipped.items():
        progress.note(f"{name}: not indexed ({why})")
    t0 = time.perf_counter()
    if ray is None or not embed:
        report = WorkspaceReport([], skipped)
        first_failure: PixError | None = None
        for shard in shards:
            progress.note(f"{shard.name}: indexing {shard.root}")
            try:
                one = index_repository(
                    str(shard.root), str(shard.db), max_bytes=max_bytes, embed=embed,
                    progress=progress,
                )  # fmt: skip
            except Exception as exc:  # one repository's failure: the others are still indexed
                if interrupt.requested():
                    raise
                error = as_pix_error(exc)
                first_failure = first_failure or error
                report.skipped[shard.name] = f"failed: {error.message}"
                progress.note(f"{shard.name}: not indexed ({error.message})")
                continue
            report.repos.append({"name": shard.name, "report": one.describe()})
            report.embedded += one.embedded
        if first_failure is not None and not report.repos:  # nothing indexed: say why
            raise first_failure
    else:
        report = _with_ray(ray, shards, skipped, ray_address, cpus, max_bytes, progress)
    report.seconds["total"] = round(time.perf_counter() - t0, 3)
    return report


def _indexable(workspace: Workspace, on_ray: bool) -> tuple[list[Shard], dict[str, str]]:
    """The shards `pix index` can index here, and why the others are left out: a bare
    database has no folder, and without Ray another machine's folder is not ours to read."""
    here = {socket.gethostname(), socket.getfqdn(), "localhost", "127.0.0.1"}
    shards, skipped = [], {}
    for shard in workspace.shards:
        if shard.root is None:
            skipped[shard.name] = "a database without a folder"
        elif not on_ray and shard.host is not None and shard.host not in here:
            skipped[shard.name] = f"owned by {shard.host}: index it there, or with --ray"
        else:
            shards.append(shard)
    return shards, skipped


def _with_ray(ray, shards, skipped, address, cpus, max_bytes, progress) -> WorkspaceReport:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no network calls of its own
    _probe(address)
    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": "ERROR"}
    interrupt.set_grace(SHUTDOWN_GRACE)
    try:
        if address == LOCAL:
            ray.init(address=LOCAL, num_cpus=cpus or os.cpu_count() or 1, **quiet)
        else:
            ray.init(address=address, **quiet)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise UsageError(f"cannot start or reach Ray at {address}: {exc}") from None
    interrupt.reclaim_sigterm()
    try:
        report = WorkspaceReport([], skipped, ray=address)
        _Run(ray, report, shards, max_bytes, progress).run()
        return report
    except ray.exceptions.RayTaskError as exc:
        cause = getattr(exc, "cause", None)  # what the task raised, without Ray's wrapping
        if isinstance(cause, PixError):
            raise cause from None
        if isinstance(cause, Exception):
            raise as_pix_error(cause) from None
        raise
    finally:
        with contextlib.suppress(Exception):
            ray.shutdown()


def _probe(address: str) -> None:
    """Fail at once on a `host:port` nobody answers: ray.init retried one for over ten
    minutes (127.0.0.1:1 here). `local`, `auto` and `ray://` addresses are Ray's to resolve."""
    host, colon, port = address.rpartition(":")
    if address in (LOCAL, "auto") or "://" in address or not colon or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=PROBE_SECONDS).close()
    except OSError as exc:
        raise UsageError(f"cannot reach Ray at {address}: {exc.strerror or exc}") from None


class _Run:
    """The driver's side of one distributed index: which input is queued, running or done,
    and which repositories still want it."""

    def __init__(self, ray, report: WorkspaceReport, shards, max_bytes: int, progress) -> None:
        self.ray, self.report, self.shards = ray, report, shards
        self.max_bytes, self.progress = max_bytes, progress
        self.text: dict[int, str] = {}  # queued inputs' texts
        self.queue: deque[int] = deque()
        self.wanted_by: dict[int, list[str]] = {}  # input -> repositories still to write it to
        self.vector: dict[int, bytes] = {}  # inputs embedded in this run
        self.running: dict = {}  # embedding task -> its inputs
        self.writes: list = []  # write calls, checked at the end
        self.repos_of: dict[int, int] = {}  # input -> how many repositories wanted it
        self.snapshot: dict[str, int] = {}
        self.reports: dict[str, dict] = {}
        self.db = {shard.name: str(shard.db) for shard in shards}

    def run(self) -> None:
        ray = self.ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.report.workers = int(ray.cluster_resources().get("CPU", 1))
        preparer_actor = ray.remote(num_cpus=0)(Preparer)
        writer_actor = ray.remote(num_cpus=0)(Writer)
        self.embed_task = ray.remote(num_cpus=1)(embed_block)
        nodes = _nodes(ray)
        owners: dict[str, tuple] = {}
        self.writer: dict[str, object] = {}
        preparing: dict = {}
        for shard in self.shards:
            node = _node_of(shard, nodes)
            if node not in owners:
                pinned = NodeAffinitySchedulingStrategy(node, soft=False)
                owners[node] = (
                    preparer_actor.options(scheduling_strategy=pinned).remote(),
                    writer_actor.options(scheduling_strategy=pinned).remote(),
                )
            preparer, writer = owners[node]
            self.writer[shard.name] = writer
            ref = preparer.prepare.remote(
                shard.name, str(shard.root), str(shard.db), self.max_bytes
            )
            preparing[ref] = shard.name
        self.progress.start("embedding chunks (ray)", 0)
        t0 = time.perf_counter()
        while preparing or self.running or self.queue:
            self._dispatch(last=not preparing)
            ready, _ = ray.wait([*preparing, *self.running], num_returns=1, timeout=WAIT_SECONDS)
            for ref in ready:
                if ref in preparing:
                    del preparing[ref]
                    self._prepared(*ray.get(ref))
                else:
                    self._embedded(self.running.pop(ref), *ray.get(ref))
        ray.get(self.writes)
        self.progress.finish()
        self.report.seconds["embed"] = round(time.perf_counter() - t0, 3)
        t1 = time.perf_counter()
        names = [shard.name for shard in self.shards]
        ends = [self.writer[n].finish.remote(n, self.snapshot[n]) for n in names]
        for name, end in zip(names, ray.get(ends), strict=True):
            self.report.swept += end["swept"]
            one = {**self.reports[name], "embedded": end["written"] + end["swept"]}
            self.report.repos.append({"name": name, "report": {**one, "embedPending": end["left"]}})
        self.report.seconds["finish"] = round(time.perf_counter() - t1, 3)

    def _prepared(self, name: str, snapshot: int, report: dict, pending: list) -> None:
        """A repository's keyword and static phases are done: queue its new inputs, write
        those already embedded in this run, and claim those running for another."""
        self.snapshot[name] = snapshot
        self.reports[name] = report
        fresh, running, done = [], [], []
        for key, text in pending:
            self.repos_of[key] = self.repos_of.get(key, 0) + 1
            if self.repos_of[key] == 2:
                self.report.shared += 1
            if key in self.vector:
                done.append((key, self.vector[key]))
            elif key in self.wanted_by:
                self.wanted_by[key].append(name)
                if key not in self.text:  # running: its block's claims did not name this one
                    running.append(key)
            else:
                self.text[key] = text
                self.wanted_by[key] = [name]
                fresh.append(key)
        self.report.wanted += len(pending)
        writer = self.writer[name]
        writer.open.remote(name, self.db[name])
        if running:
            writer.claim.remote(name, running)  # before the write: one actor, calls in order
        if done:
            self.writes.append(writer.write.remote(name, done))
        fresh.sort(key=lambda key: (len(self.text[key]), key))
        self.queue.extend(fresh)
        self.progress.grow(len(fresh))
        copied = self._copy_known(name, fresh)
        self.progress.note(
            f"{name}: {len(pending)} inputs to embed, {len(fresh) - copied} not seen before"
        )

    def _copy_known(self, name: str, fresh: list[int]) -> int:
        """Queued inputs whose vector another database of the workspace already holds (an
        earlier run, or an interrupted one that wrote a shared input to one database only) are
        copied rather than embedded: `name`'s new inputs are looked up in the databases
        prepared before it, and their queued inputs in `name`'s. Returns how many of `fresh`
        were found."""
        others = [other for other in self.snapshot if other != name]
        theirs = [key for key in self.queue if name not in self.wanted_by[key]]
        asks = [self.writer[other].known.remote(other, fresh) for other in others if fresh]
        if theirs:
            asks.append(self.writer[name].known.remote(name, theirs))
        found: dict[int, bytes] = {}
        for answer in self.ray.get(asks):
            found.update(answer)
        if not found:
            return 0
        self.vector.update(found)
        self.queue = deque(key for key in self.queue if key not in found)
        by_repo: dict[str, list[tuple[int, bytes]]] = {}
        for key, vector in found.items():
            del self.text[key]
            for repo in self.wanted_by.pop(key):
                by_repo.setdefault(repo, []).append((key, vector))
        for repo, done in by_repo.items():
            self.writes.append(self.writer[repo].write.remote(repo, done))
        self.report.copied += len(found)
        self.progress.grow(-len(found))
        return len(set(fresh) & found.keys())

    def _dispatch(self, last: bool) -> None:
        """Submit blocks while workers would otherwise wait; partial blocks only when nothing
        runs or nothing more is coming."""
        while self.queue and len(self.running) < self.report.workers * IN_FLIGHT:
            if len(self.queue) < BLOCK_INPUTS and not last and self.running:
                return
            block, chars = [], 0
            while self.queue and len(block) < BLOCK_INPUTS and chars < BLOCK_CHARS:
                key = self.queue.popleft()
                block.append(key)
                chars += len(self.text[key])
            by_repo: dict[str, list[int]] = {}
            for key in block:
                for name in self.wanted_by[key]:
                    by_repo.setdefault(name, []).append(key)
            claims = [self.writer[n].claim.remote(n, keys) for n, keys in by_repo.items()]
            texts = [self.text.pop(key) for key in block]
            self.report.inputs += len(block)
            self.running[self.embed_task.remote(block, texts, *claims)] = block

    def _embedded(self, block: list[int], keys: list[int], vectors: np.ndarray) -> None:
        """A block came back: its vectors go to every repository that wants them, one write
        (transaction) per repository."""
        for key, vector in zip(keys, vectors, strict=True):
            self.vector[key] = vector.tobytes()
        by_repo: dict[str, list[tuple[int, bytes]]] = {}
        for key in block:
            for name in self.wanted_by.pop(key):
                if key in self.vector:  # else another pix held it everywhere: theirs
                    by_repo.setdefault(name, []).append((key, self.vector[key]))
        for name, done in by_repo.items():
            self.writes.append(self.writer[name].write.remote(name, done))
        self.report.embedded += len(keys)
        self.progress.advance(len(block))


def _nodes(ray) -> dict[str, str]:
    """Each alive Ray node's hostname and IP address -> its node id; '' -> the driver's."""
    nodes = {"": ray.get_runtime_context().get_node_id()}
    for node in ray.nodes():
        if node.get("Alive"):
            for name in (node.get("NodeManagerHostname"), node.get("NodeManagerAddress")):
                if name:
                    nodes.setdefault(name, node["NodeID"])
    return nodes


def _node_of(shard: Shard, nodes: dict[str, str]) -> str:
    node = nodes.get(shard.host or "")
    if node is None:
        known = ", ".join(sorted(name for name in nodes if name))
        raise UsageError(
            f"{shard.name}: no Ray node is host {shard.host}", hint=f"the cluster's nodes: {known}"
        )
    return node


class Preparer:
    """A Ray actor on a repository's machine: the keyword and static phases of `pix index`."""

    def prepare(self, name: str, root: str, db: str, max_bytes: int) -> tuple:
        """(name, snapshot id, the index report, [(embed key, text)] still to embed)."""
        report = index_repository(root, db, max_bytes=max_bytes, embed=False)
        store = open_store(Path(db), create=False)
        try:
            copy_known_vectors(store, report.snapshot_id)
            rows = store.conn.execute(
                sql.PENDING_EMBEDDINGS, {"snapshot": report.snapshot_id}
            ).fetchall()
            texts = content.embed_inputs(store.conn, rows)
        finally:
            store.close()
        pending = [(row[0], text) for row, text in zip(rows, texts, strict=True)]
        return name, report.snapshot_id, report.describe(), pending


class Writer:
    """A Ray actor on a repository's machine: leases and vectors into its databases."""

    def __init__(self) -> None:
        self.stores: dict[str, Store] = {}
        self.leases: dict[str, Leases] = {}
        self.written: dict[str, int] = {}

    def open(self, name: str, db: str) -> None:
        if name not in self.stores:
            store = open_store(Path(db), create=False)
            self.stores[name], self.leases[name] = store, Leases(store)
            self.written[name] = 0

    def known(self, name: str, keys: list[int]) -> dict[int, bytes]:
        """The vectors this database already holds for any of `keys`."""
        rows = self.stores[name].conn.execute(VECTORS_FOR_KEYS, (json.dumps(keys),))
        return {key: bytes(vector) for key, vector in rows}

    def claim(self, name: str, keys: list[int]) -> list[int]:
        """Lease the inputs nobody holds and that still lack a vector here."""
        return self.leases[name].claim(keys, len(keys)).mine

    def write(self, name: str, done: list[tuple[int, bytes]]) -> None:
        write_vectors(self.stores[name], self.leases[name], done)
        self.written[name] += len(done)

    def finish(self, name: str, snapshot: int) -> dict:
        """Release what is still leased, embed what is left (waiting for another pix's
        leases), and close."""
        store = self.stores.pop(name)
        try:
            self.leases.pop(name).release_all()
            swept = embed_pending(store, snapshot)
            left = len(
                store.conn.execute(sql.PENDING_EMBEDDINGS, {"snapshot": snapshot}).fetchall()
            )
            store.shrink()
        finally:
            store.close()
        return {"written": self.written.pop(name), "swept": swept, "left": left}


_embedder: Embedder | None = None


def embed_block(keys: list[int], texts: list[str], *claims: list[int]) -> tuple:
    """A Ray task: the vectors of the inputs some repository leased to this run (the rest are
    another pix's), as (keys, int8 array)."""
    global _embedder
    leased = set().union(*claims)
    chosen = [i for i, key in enumerate(keys) if key in leased]
    if _embedder is None:  # once per worker process; one thread, as a task has one CPU
        _embedder = Embedder(intra_threads=1)
    vectors = quantize(_embedder.embed_batch([texts[i] for i in chosen]))
    return [keys[i] for i in chosen], vectors
