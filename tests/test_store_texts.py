"""A blob's stored text read back (pix/store/texts.py): by sha and by row id, exactly as
committed; a blob the database names but does not hold is a damaged database, said so."""

from __future__ import annotations

import apsw
import pytest
from conftest import git, keyword_indexed

from pix.errors import DatabaseError
from pix.store import texts

# Long and repetitive enough that the stored content is compressed (codec.pack), and with
# characters beyond ASCII, so a wrong decode or a missing inflate shows.
LONG = "".join(f"def step_{i}():\n    return 'café {i}'\n\n" for i in range(200))
SHORT = "x = 1\n"


def test_text_by_sha_and_by_id_is_the_committed_text(tmp_path):
    root = keyword_indexed(tmp_path, {"long.py": LONG, "short.py": SHORT})
    conn = apsw.Connection(str(root / ".pix.db"), flags=apsw.SQLITE_OPEN_READONLY)
    for path, text in (("long.py", LONG), ("short.py", SHORT)):
        sha = git(root, "rev-parse", f"HEAD:{path}").strip()
        (blob_id,) = conn.execute("SELECT id FROM blob WHERE sha = ?", (sha,)).fetchone()
        assert texts.text_of(conn, sha) == text
        assert texts.text_by_id(conn, blob_id) == text
    (size, stored) = conn.execute(
        "SELECT text_size, length(content) FROM blob WHERE sha = ?",
        (git(root, "rev-parse", "HEAD:long.py").strip(),),
    ).fetchone()
    assert stored < size  # the long text was compressed, so the inflate was exercised


def test_a_blob_not_held_is_a_damaged_database(tmp_path):
    root = keyword_indexed(tmp_path, {"short.py": SHORT})
    conn = apsw.Connection(str(root / ".pix.db"), flags=apsw.SQLITE_OPEN_READONLY)
    (top,) = conn.execute("SELECT max(id) FROM blob").fetchone()
    with pytest.raises(DatabaseError, match="damaged: blob 0{40} is named but not stored"):
        texts.text_of(conn, "0" * 40)
    with pytest.raises(DatabaseError, match=f"damaged: blob #{top + 1} "):
        texts.text_by_id(conn, top + 1)
