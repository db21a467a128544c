"""The trigram index (`blob_trigram`, FTS5 over the view `blob_text`): narrowing, and reading
a candidate's text to verify it."""

from __future__ import annotations

from pix.store import sql, texts
from pix.store.db import Store


def candidate_ids(store: Store, expression: str) -> set[int]:
    """Blob ids holding every trigram of the expression (a superset of the real matches)."""
    return {row[0] for row in store.conn.execute(sql.TRIGRAM_CANDIDATES, (expression,))}


def read_text(store: Store, blob_id: int) -> str:
    """A file's stored text: decoded, secrets masked, as the indexer wrote it."""
    return texts.text_by_id(store.conn, blob_id)
