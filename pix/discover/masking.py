"""Discovery as it may be shown: secrets never match and excerpts show them masked.

Matching runs on the stored text (so a name next to a secret is found), but a matching line
counts only if the hypothesis still matches that line with its secrets masked: otherwise match
counts would spell a secret out, one guessed character at a time (`password = "h`, then
`password = "hu`, ...), even over MCP where secrets are never shown. The owner's
--show-secrets (`reveal`) turns both off. Secrets are found in the whole file
(pix.output.mask), so a line inside a private key is masked too.
"""

from __future__ import annotations

from pix.discover import trigram
from pix.discover.verify import Excerpt, FileResult, Matcher, excerpt
from pix.ingest.chunk import language_for_path
from pix.output.mask import Masker, Redactions
from pix.output.redact import find_secrets, has_private_key, may_hold_secret
from pix.store.db import Store

Key = tuple[str, str | None]  # (blob, language): one content may be config at one path only


class Shown:
    def __init__(self, store: Store, files: dict, reveal: bool, snippet_length: int) -> None:
        self.store, self.files, self.reveal = store, files, reveal
        self.snippet_length = snippet_length
        self.redactions = Redactions(reveal)
        # files with a match: their Masker, or None when they hold no secret (most files;
        # keeping only the few with secrets bounds memory on a broad regex over every file)
        self._maskers: dict[Key, Masker | None] = {}
        # matched lines that may hold a secret: only their excerpts need the full search
        self._risky: dict[Key, set[int]] = {}

    @staticmethod
    def key(sha: str, path: str) -> Key:
        return sha, language_for_path(path)

    def masker(self, key: Key, text: str | None, text_id: int | None = None) -> Masker | None:
        """The file's Masker, or None when it holds no secret. `text` may be None when the
        file's `text_id` is given: it is read only if the file was not searched yet."""
        if key not in self._maskers:
            if text is None:
                text = trigram.read_text(self.store, text_id, key[0])
            secrets = find_secrets(text, key[1])
            self._maskers[key] = Masker(text, key[1], secrets) if secrets else None
        return self._maskers[key]

    def visible(self, result: FileResult, key: Key, text: str, matcher: Matcher) -> FileResult:
        """`result` without the lines that match only inside a secret (all of it when the
        owner reveals secrets; its risky lines are noted either way, for the excerpts)."""
        if not result.lines:
            return result
        if has_private_key(text):
            risky = set(result.lines)
        else:  # the whole-file search only where it can matter
            lines = text.split("\n")
            risky = {n for n in result.lines if may_hold_secret(lines[n - 1])}
        self._risky.setdefault(key, set()).update(risky)
        if self.reveal or not risky:
            return result
        masker = self.masker(key, text)
        if masker is None:
            return result
        hidden = {
            line
            for line in result.lines
            if masker.found.get(line - 1) and not matcher.matches(masker.masked[line - 1])
        }
        if not hidden:
            return result
        return FileResult(
            [n for n in result.lines if n not in hidden],
            [e for e in result.excerpts if e.line not in hidden],
            result.limited,
        )

    def excerpts(self, path: str, picked: list[tuple[str, Excerpt]]) -> list[dict]:
        sha, text_id, _ = self.files[path]
        key = self.key(sha, path)
        risky = self._risky.get(key, set())
        masker = (
            self.masker(key, None, text_id) if any(e.line in risky for _, e in picked) else None
        )
        out = []
        for hid, e in picked:
            found = masker.secrets_in(e.line, e.line) if masker else set()
            if masker and found:
                self.redactions.add(sha, found)
                if not self.reveal:
                    line = masker.masked[e.line - 1]
                    e = excerpt(line, masker.column(e.line, e.column), e.line, self.snippet_length)
            out.append(
                {"hypothesis": hid, "line": e.line, "text": e.text, "truncated": e.truncated}
            )
        return out
