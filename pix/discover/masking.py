"""Discovery as it may be shown: excerpts of the stored text, whose secrets are masked.

Matching runs on the stored text, where every secret is already `[REDACTED:kind]`
(pix.ingest.mask): a hypothesis can never match inside a secret, so match counts cannot spell
one out (`password = "h`, then `password = "hu`, ...), over the CLI or MCP. Which secrets an
excerpt's line covered comes from the `secret` table. The owner's --show-secrets (`reveal`)
shows an excerpt's line as the repository has it (work tree or git objects); matching still
runs on the masked text.
"""

from __future__ import annotations

import os

from pix.discover.verify import Excerpt, excerpt
from pix.locate import Target
from pix.output.shown import Redactions, ShownFile
from pix.snapshot import Originals
from pix.store import sql, texts
from pix.store.db import Store


class Shown:
    def __init__(
        self, store: Store, target: Target, files: dict, reveal: bool, snippet_length: int
    ) -> None:
        self.store, self.target, self.files, self.reveal = store, target, files, reveal
        self.snippet_length = snippet_length
        self.redactions = Redactions(reveal)
        self._originals = Originals(store, target)

    def _file(self, sha: str, path: str) -> ShownFile:
        conn = self.store.conn
        secrets = conn.execute(sql.SECRETS_OF_BLOB, (sha,)).fetchall()
        if not (self.reveal and secrets):  # nothing to reveal: no need for the text itself
            return ShownFile("", secrets)
        text = texts.text_of(conn, sha)
        return ShownFile(text, secrets, self._originals.read(path, sha))

    def excerpts(self, path: str, picked: list[tuple[str, Excerpt]]) -> list[dict]:
        sha = self.files[path][0]
        shown = self._file(sha, path) if picked else None
        out = []
        for hid, e in picked:
            assert shown is not None
            found = shown.secrets_in(e.line, e.line)
            if found:
                self.redactions.add(sha, found, shown, path)
                if self.reveal and shown.original is not None:
                    masked, raw = shown.masked[e.line - 1], shown.original[e.line - 1]
                    e = excerpt(
                        raw, _raw_column(masked, raw, e.column), e.line, self.snippet_length
                    )
            out.append(
                {"hypothesis": hid, "line": e.line, "text": e.text, "truncated": e.truncated}
            )
        return out

    def warnings(self) -> list[str]:
        return self.redactions.warnings()


def _raw_column(masked: str, raw: str, col: int) -> int:
    """Where column `col` of a masked line lands in the original: unchanged before the first
    masked character, the same distance from the line's end after it."""
    prefix = len(os.path.commonprefix([raw, masked]))
    if col <= prefix:
        return col
    return max(prefix, min(col + len(raw) - len(masked), len(raw)))
