"""A blob's stored text, read back: decoded, secrets masked, as the indexer wrote it
(pix/store/codec.py says how it is stored; pix/store/content.py writes it).

Every reader asks for a blob the same read found in the database (a hit, a chunk, a snapshot's
file), so a missing row means a damaged database: it is said as such, never read as an empty
text that would then be cached, shown or searched."""

from __future__ import annotations

import apsw

from pix.errors import REBUILD_HINT, DatabaseError
from pix.store import codec, search_sql, sql


def text_of(conn: apsw.Connection, sha: str) -> str:
    """The text of the blob with this sha."""
    return _text(conn.execute(search_sql.BLOB_CONTENT_BY_SHA, (sha,)).fetchone(), sha)


def text_by_id(conn: apsw.Connection, blob_id: int) -> str:
    """The text of the blob with this row id."""
    return _text(conn.execute(sql.BLOB_CONTENT, (blob_id,)).fetchone(), f"#{blob_id}")


def _text(row: tuple | None, name: str) -> str:
    if row is None:
        raise DatabaseError(
            f"the database is damaged: blob {name} is named but not stored", hint=REBUILD_HINT
        )
    return codec.unpack(*row)
