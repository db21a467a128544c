"""Embedding leases (migrations/005_embed_lease.sql): which process embeds which input.

Every change is one short write transaction: claiming a block, and writing vectors together
with the release of the leases they settle. A process holds leases only for the block it is
working on, so what another process waits for is bounded by one block.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass

import apsw

from pix.store.db import Store

# Renewed at every vector commit (every ~2 s); a batch of 4,096 tokens took up to ~4 s on a
# loaded 2-core machine. Past this, a silent owner's inputs are anyone's.
LEASE_SECONDS = 30.0

EXPIRE_LEASES = "DELETE FROM embed_lease WHERE expires_at < ?"
LEASE_OWNERS_ON_HOST = "SELECT DISTINCT pid FROM embed_lease WHERE host = ? AND pid <> ?"
DROP_LEASES_OF_PID = "DELETE FROM embed_lease WHERE host = ? AND pid = ?"
# This process's own earlier runs are over (one process embeds in one run at a time).
DROP_OWN_EARLIER = """
DELETE FROM embed_lease WHERE host = :host AND pid = :pid AND started_at <> :started
"""
HELD_INPUTS = "SELECT embed_key FROM embed_lease"
# The candidates (a JSON array of embed_key) that still have a chunk without a vector.
CLAIM_INPUTS = """
INSERT INTO embed_lease(embed_key, pid, host, started_at, expires_at)
SELECT j.value, :pid, :host, :started, :expires
FROM json_each(:candidates) AS j
WHERE EXISTS (
    SELECT 1 FROM chunk c
    WHERE c.embed_key = j.value
      AND NOT EXISTS (SELECT 1 FROM chunk_vec v WHERE v.chunk_id = c.id)
)
RETURNING embed_key
"""
RELEASE_INPUTS = """
DELETE FROM embed_lease
WHERE embed_key IN (SELECT value FROM json_each(:done))
  AND pid = :pid AND host = :host AND started_at = :started
"""
RELEASE_ALL = "DELETE FROM embed_lease WHERE pid = :pid AND host = :host AND started_at = :started"
RENEW = """
UPDATE embed_lease SET expires_at = :expires
WHERE pid = :pid AND host = :host AND started_at = :started
"""


@dataclass
class Claim:
    mine: list[int]  # claimed now, in the order asked
    settled: list[int]  # asked, free, and no chunk lacks their vector: someone finished them
    held: int  # candidates another live process holds


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


class Leases:
    """One embedding run's leases."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.owner = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}

    def _mine(self, **extra: object) -> dict:
        return {**self.owner, **extra}

    def claim(self, candidates: list[int], limit: int) -> Claim:
        """Take up to `limit` of `candidates` (in their order) that nobody holds and that still
        lack a vector."""
        conn = self.store.conn
        with self.store.write():
            self._end_dead_leases(conn)
            held = {key for (key,) in conn.execute(HELD_INPUTS)}
            free = [key for key in candidates if key not in held]
            ask = free[:limit]
            got = {
                key
                for (key,) in conn.execute(
                    CLAIM_INPUTS,
                    self._mine(candidates=json.dumps(ask), expires=time.time() + LEASE_SECONDS),
                )
            }
        return Claim(
            mine=[key for key in ask if key in got],
            settled=[key for key in ask if key not in got],
            held=len(candidates) - len(free),
        )

    def settle(self, conn: apsw.Connection, done: list[int]) -> None:
        """Inside the transaction that writes `done`'s vectors: release them, renew the rest."""
        conn.execute(RELEASE_INPUTS, self._mine(done=json.dumps(done)))
        conn.execute(RENEW, self._mine(expires=time.time() + LEASE_SECONDS))

    def release_all(self) -> None:
        with self.store.write() as conn:
            conn.execute(RELEASE_ALL, self._mine())

    def _end_dead_leases(self, conn: apsw.Connection) -> None:
        conn.execute(EXPIRE_LEASES, (time.time(),))
        conn.execute(DROP_OWN_EARLIER, self._mine())
        host, me = self.owner["host"], self.owner["pid"]
        for (pid,) in conn.execute(LEASE_OWNERS_ON_HOST, (host, me)).fetchall():
            if not _alive(pid):
                conn.execute(DROP_LEASES_OF_PID, (host, pid))
