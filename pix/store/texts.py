"""A blob's stored text, read back: decoded, secrets masked, as the indexer wrote it
(pix/store/codec.py says how it is stored; pix/store/content.py writes it)."""

from __future__ import annotations

import apsw

from pix.store import codec, search_sql, sql


def text_of(conn: apsw.Connection, sha: str) -> str | None:
    """The text of the blob with this sha, or None when the database holds no such blob."""
    row = conn.execute(search_sql.BLOB_CONTENT_BY_SHA, (sha,)).fetchone()
    return codec.unpack(*row) if row else None


def text_by_id(conn: apsw.Connection, blob_id: int) -> str | None:
    """The text of the blob with this row id, or None when there is none."""
    row = conn.execute(sql.BLOB_CONTENT, (blob_id,)).fetchone()
    return codec.unpack(*row) if row else None
