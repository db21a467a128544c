"""The trigram index: filling it for blobs stored before it existed, narrowing, reading text.

`pix index` writes a blob's text and trigrams as it stores the blob (pix/index.py). Blobs stored
before migration 003 have neither, and SQL cannot inflate their zlib content, so discovery
fills them in from Python before searching: in small committed batches, within part of the time
budget, and never waiting long for a busy database. Whatever is still missing is scanned from
the zlib content instead and counted in the response (`index.unindexedFiles`), never skipped.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass

import apsw

from pix.ingest import scan
from pix.store import sql
from pix.store.db import Store

BACKFILL_BATCH = 200
BACKFILL_SHARE = 0.5  # of the time budget, at most, so the search itself keeps time to run
BUSY_WAIT_MS = 200  # a writer holding the lock: search without filling rather than wait


@dataclass
class Backfill:
    filled: int = 0
    state: str = "complete"  # 'complete' | 'partial' (budget) | 'deferred' (busy, read-only)


def backfill(store: Store, snapshot_id: int, deadline: float) -> Backfill:
    """Give the snapshot's blobs that lack them a text row (and so trigrams)."""
    report = Backfill()
    conn = store.conn
    conn.setbusytimeout(BUSY_WAIT_MS)
    try:
        while True:
            if time.monotonic() >= deadline:
                if conn.execute(sql.BLOBS_WITHOUT_TEXT, (snapshot_id, 1)).fetchall():
                    report.state = "partial"
                return report
            with store.write():
                rows = conn.execute(
                    sql.BLOBS_WITHOUT_TEXT, (snapshot_id, BACKFILL_BATCH)
                ).fetchall()
                for sha, content in rows:
                    conn.execute(sql.INSERT_BLOB_TEXT, (sha, decode_blob(content)))
            report.filled += len(rows)
            if len(rows) < BACKFILL_BATCH:
                return report
    except (apsw.BusyError, apsw.ReadOnlyError, apsw.CantOpenError):
        report.state = "deferred"
        return report
    finally:
        conn.setbusytimeout(10_000)  # what pix.store.db opens connections with


def decode_blob(content: bytes) -> str:
    """A blob's text exactly as the indexer decoded it (its skip rules made it valid UTF-8)."""
    return scan.decode(zlib.decompress(content))


def candidate_ids(store: Store, expression: str) -> set[int]:
    """Text rows holding every trigram of the expression (a superset of the real matches)."""
    return {row[0] for row in store.conn.execute(sql.TRIGRAM_CANDIDATES, (expression,))}


def read_text(store: Store, text_id: int | None, sha: str) -> str:
    """A file's decoded text: from its text row, else inflated from the blob."""
    if text_id is not None:
        row = store.conn.execute(sql.BLOB_TEXT, (text_id,)).fetchone()
        if row is not None:
            return row[0]
    return decode_blob(store.conn.execute(sql.BLOB_CONTENT, (sha,)).fetchone()[0])
