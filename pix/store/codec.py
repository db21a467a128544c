"""How a blob's text is stored: UTF-8, zlib-compressed, the sqlite3 shell's sqlar convention;
and how a path is (`stored_path`).

`content` is zlib (RFC 1950) of the text's `text_size` UTF-8 bytes, or the bytes themselves when
compressing would not make them smaller; `sqlar_uncompress(content, text_size)` reads either,
in the stock sqlite3 shell and, registered by pix.store.db, on pix's own connections.
"""

from __future__ import annotations

import zlib
from functools import lru_cache

LEVEL = 6


def pack(text: str) -> tuple[int, bytes]:
    """(text_size, content) for a text."""
    raw = text.encode("utf-8")
    packed = zlib.compress(raw, LEVEL)
    return len(raw), packed if len(packed) < len(raw) else raw


def unpack(content: bytes, text_size: int) -> str:
    return sqlar_uncompress(content, text_size).decode("utf-8")


# The view `chunk_text` inflates a blob once per chunk it reads (a delete trigger, or a
# person at the prompt): the last few blobs are kept.
@lru_cache(maxsize=8)
def sqlar_uncompress(content: bytes, text_size: int) -> bytes:
    """The sqlite3 shell's sqlar_uncompress: content as it is when its length is text_size
    (stored uncompressed), else inflated."""
    if content is None:
        return None
    content = bytes(content)
    if text_size <= 0 or len(content) == text_size:
        return content
    return zlib.decompress(content)


def stored_path(path: str) -> str:
    """A path as the database stores it, UTF-8 text. git and the file system hand pix a name
    that is not UTF-8 with its bytes as surrogate escapes, which SQLite cannot store: such a
    name is written with \\x escapes (`caf\\xe9.py`) and its file skipped as unreadable, so
    one odd name does not stop the index of the whole tree."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
