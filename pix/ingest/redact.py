"""Find secrets in text about to be shown, so output can mask them.

A span covers the secret value only; key names, URL schemes and PEM markers stay readable.

    private_key          body of a PEM / OpenSSH / PGP private key; a block cut by the chunk
                         edge (no BEGIN or no END line) is masked up to the edge
    aws_access_key       AKIA / ASIA + 16 upper-case letters or digits
    github_token         ghp_ gho_ ghu_ ghs_ ghr_ + 36 or more; github_pat_ fine-grained
    gitlab_token         glpat- + 20 or more
    slack_token          xoxa- xoxb- xoxp- xoxr- xoxs- tokens holding a digit
    slack_webhook        the T.../B.../secret path of a hooks.slack.com/services/ URL
    stripe_key           sk_live_ rk_live_ sk_test_ rk_test_ + 16 or more
    google_api_key       AIza + 35
    anthropic_key        sk-ant- + 32 or more
    openai_key           sk- / sk-proj- / sk-svcacct- / sk-admin- + 32 or more, mixed case
    npm_token            npm_ + 36
    pypi_token           pypi-AgEI... / pypi-AgEN... (PyPI and TestPyPI macaroons)
    sendgrid_key         SG.<22>.<43>
    jwt                  eyJ<header>.eyJ<payload>.<signature>
    basic_auth           the base64 after `Basic ` when it decodes to user:password
    bearer_token         the token after `Bearer `: 16 or more token chars, letters and digits
    connection_password  the password of scheme://user:password@host (up to the last @ before
                         the host), of Password= / Pwd= in an ADO.NET or ODBC connection string
                         and of password= in a JDBC or URL query (?user=u&password=...&)
    password             a literal assigned to a password name (password, passwd, passphrase,
                         pwd, pass, db_password, dbPassword, user_password_1, "password": ...,
                         `password: &str =`), in <db-password>...</db-password>, --password=...,
                         and in shell / Dockerfile PGPASSWORD=... cmd, ENV PASSWORD ...; a value
                         with spaces only if quoted and not a message ("Enter your password:")
    secret               a random-looking literal assigned to a secret name (secret, token,
                         credentials, api_key, access_key, client_secret, secret_key_base, ...):
                         16+ chars of base64 / hex / key punctuation with letters and digits,
                         Shannon entropy >= 2.75 bits/char, and not a path, URL, dotted or
                         word_like name, hash digest or format string

Only literals count: `password = get_password()`, `password=None`, `${DB_PASSWORD}`,
`{{ password }}`, `%s`, `<password>`, `***` and empty strings are never masked. Unquoted values
count only in config-style languages (yaml, toml, ini, cfg, properties, env, conf, text, shell,
dockerfile), where a bare word is a string, and in markdown's fenced blocks of those (```yaml,
```sh, a bare ```); markdown prose outside fences stays as strict as code.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

KINDS: tuple[str, ...] = (
    # Also the tie-break between equal spans: specific formats win over generic ones.
    "private_key", "aws_access_key", "github_token", "gitlab_token", "slack_token",
    "slack_webhook", "stripe_key", "google_api_key", "anthropic_key", "openai_key", "npm_token",
    "pypi_token", "sendgrid_key", "jwt", "basic_auth", "bearer_token", "connection_password",
    "password", "secret",
)  # fmt: skip
_PRIORITY = {kind: rank for rank, kind in enumerate(KINDS)}
# Raise it whenever a rule finds more (or other) secrets: `pix index` re-masks every stored text
# written under an older version (meta key redact.version). Copies of a found secret elsewhere
# in its file are masked since the twenty-fourth session without a new version: a re-mask
# reads the stored texts, where the value is masked already, so it could not find the copies
# (`pix index --rebuild` masks them).
VERSION = 2

# bench/redaction_bench.py measures it: 98% of random 16-char hex strings (the weakest secret
# accepted) and every random string of 24+ chars reach 2.75 bits/char; the corpus literals
# below it are run-length data (WKB geometry hex, 1e10000000000000000, zzzz_m2m_...).
_ENTROPY_BITS = 2.75
_MIN_SECRET_CHARS = 16
CONFIG_LANGUAGES = frozenset(
    {"yaml", "toml", "ini", "cfg", "properties", "env", "conf", "text", "shell", "dockerfile"}
)


@dataclass(frozen=True)
class Secret:
    start: int  # char offset in the text given to find_secrets
    end: int  # exclusive; the secret value only
    kind: str


def _mixed(value: str) -> bool:
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _basic_credentials(value: str) -> bool:
    # "Basic authentication" is prose; a real header decodes to printable user:password.
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False
    return ":" in decoded and decoded.isprintable()


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]  # group 'v', when present, is the value within the match
    needles: tuple[str, ...]  # cheap `in` tests: the pattern needs one of them
    check: Callable[[str], bool] | None = None


def _token(kind: str, body: str, needles: tuple[str, ...], check=None) -> _Rule:
    # Not inside a longer word or a base64 / hash blob: lock-file hashes hold any 4 letters.
    edge = "A-Za-z0-9_+/-"
    return _Rule(kind, re.compile(f"(?<![{edge}])(?:{body})(?![{edge}])"), needles, check)


_TOKEN_RULES: tuple[_Rule, ...] = (
    _token("aws_access_key", r"(?:AKIA|ASIA)[A-Z0-9]{16}", ("AKIA", "ASIA")),
    _token("github_token", r"gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,255}",
           ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _token("gitlab_token", r"glpat-[A-Za-z0-9_-]{20,64}", ("glpat-",)),
    _token("slack_token", r"xox[abprs]-[A-Za-z0-9-]{10,250}", ("xox",), _mixed),
    _Rule("slack_webhook", re.compile(
        r"hooks\.slack\.com/services/(?P<v>T[A-Za-z0-9_]{6,16}/B[A-Za-z0-9_]{6,16}"
        r"/[A-Za-z0-9_]{16,64})"), ("hooks.slack.com",)),
    _token("stripe_key", r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,247}", ("k_live_", "k_test_")),
    _token("google_api_key", r"AIza[A-Za-z0-9_-]{35}", ("AIza",)),
    _token("anthropic_key", r"sk-ant-[A-Za-z0-9_-]{32,200}", ("sk-ant-",)),
    # Real keys are base62 noise; CSS-like names (sk-some-long-class-name-2) are not.
    _token("openai_key", r"sk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{32,200}", ("sk-",),
           lambda v: _mixed(v) and not v.islower() and not v.isupper()),
    _token("npm_token", r"npm_[A-Za-z0-9]{36}", ("npm_",)),
    _token("pypi_token", r"pypi-AgE[IN][A-Za-z0-9_-]{50,1000}", ("pypi-AgE",)),
    _token("sendgrid_key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", ("SG.",)),
    _token("jwt", r"eyJ[A-Za-z0-9_-]{8,2000}\.eyJ[A-Za-z0-9_-]{8,4000}\.[A-Za-z0-9_-]{8,2000}",
           ("eyJ",)),
    _Rule("basic_auth", re.compile(
        r"(?<![A-Za-z0-9_])Basic[ \t]{1,8}(?P<v>[A-Za-z0-9+/]{4,4096}={0,2})(?![A-Za-z0-9+/=])"),
        ("Basic",), _basic_credentials),
    _Rule("bearer_token", re.compile(
        r"(?<![A-Za-z0-9_])[Bb]earer[ \t]{1,8}(?P<v>[A-Za-z0-9._~+/-]{16,4096}={0,3})"
        r"(?![A-Za-z0-9._~+/=-])"), ("earer",), _mixed),
    # Starting at the literal '://' keeps it fast; the user may be empty, the password not, and
    # it runs to the last '@' before the host (p@ssword1@db): at most 128 steps back.
    _Rule("connection_password",
          re.compile(r"://[^\s:/?#@'\"<>]{0,64}:(?P<v>[^\s/?#'\"<>]{1,128})@"), ("://",),
          lambda value: not _is_placeholder(value)),
)  # fmt: skip

# A name ends where its keyword ends (a number allowed: password2, user_password_1), so
# password_reset_url, token_type and secret_hash are not secret names.
_PASSWORD_NAMES = r"pass(?:word|wd|phrase)|(?<![a-z0-9])(?:pass|pwd)"
_NUMBER_SUFFIX = r"(?:[_-]?[0-9]{1,2})?"
_KEY_PREFIXES = r"(?:api|access|private|auth|secret|signing|encryption|master|client|app)[_-]?"
_SECRET_NAMES = rf"secret|token|credentials?|{_KEY_PREFIXES}key(?:_base)?"  # Rails' key_base
# =, :, :=, =>, and a typed `name: str = "..."` (Rust's `&'a str` too); never == (a
# comparison) or :: (a scope).
_OPERATOR = (
    r"[ \t]{0,8}(?::=|=>|=(?![=>~])|:[ \t]{0,8}(?:&(?:'[a-z_]{1,20}[ \t]{1,4})?)?"
    r"[a-z_][\w.\[\], |]{0,40}?[ \t]{0,8}=(?![=>])|:(?![:=]))[ \t]{0,8}"
)
# Possessive runs ({m,n}+): giving back characters can never find the closing quote or the
# end of line, and would cost 256 steps per `password=password=...` hit.
_VALUE = (
    r"(?:(?P<prefix>[a-z]{1,2})?"  # r'', b'', f'' string prefixes
    r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.){0,256}+)\"|'(?P<sq>(?:[^'\\\n]|\\.){0,256}+)'"
    r"|`(?P<bq>[^`\\\n]{0,256}+)`)"
    r"|(?P<bare>[^\s\"'`,;#]{1,256}+)(?=[ \t]{0,64}(?:[#;][^\n]{0,1000})?\r?$))"  # word, EOL
)
_ASSIGNMENT = re.compile(
    rf"(?:(?P<pw>{_PASSWORD_NAMES})|(?P<sec>{_SECRET_NAMES})){_NUMBER_SUFFIX}(?![a-z0-9_.-])"
    r"[\"'`]?\]?"  # the end of a quoted key or a subscript: "password": / ['password'] =
    + _OPERATOR
    + _VALUE,
    re.IGNORECASE | re.MULTILINE,
)
# Every name above holds one of these cores; a "key" name starts at its prefix.
_NAME_CORE = re.compile(r"pass|pwd|secret|token|credential|key")
_KEY_PREFIX = re.compile(rf"{_KEY_PREFIXES}\Z")
_NAME_LEFT = re.compile(r"[A-Za-z0-9_.-]{1,40}\Z")  # the rest of a name, left of its keyword

# Values that stand for a secret rather than being one: templates, format fields, env refs.
_PLACEHOLDER = re.compile(
    r"\$\{|\{\{|\{%|<%|#\{|%\(\w{0,64}\)[sd]|%[sd]\b|\{\w{0,64}\}|^\$[\w({]|^<[^>]{0,256}>$"
    r"|^\[[^\]]{0,256}\]$|\.\.\.|…"
)
# Words docs and configs write where a value goes, and type names (`password: str`).
_PLACEHOLDER_WORDS = frozenset(
    "none null nil true false undefined required optional redacted hidden masked placeholder "
    "changeme change_me replace_me todo tbd str string bytes int bool boolean".split()
)
_MASK_CHARS = frozenset("*x.#-_•")  # ***, xxxx, ---: a value already masked
# Base64, hex, base62 and the punctuation of generated keys (Django's); code holds more.
_SECRET_CHARS = re.compile(r"[A-Za-z0-9+/=_.~!@#$%^&*()-]{1,256}")
# Lock files and integrity fields say which digest they hold: sha256:..., sha512-...
_HASH_PREFIX = re.compile(r"(?:sha\d{0,3}|md5|blake2[bs]?)[:-]", re.IGNORECASE)
# myapp.tokens.TokenGenerator, settings.SECRET_KEY: a reference, not a value.
_DOTTED_NAME = re.compile(r"[A-Za-z_][\w-]{0,100}(?:\.[A-Za-z_][\w-]{0,100}){1,20}")
# /etc/app/key, ./secrets, ~/.token, C:\keys, token.json: where a secret lives, not it.
_PATH_LIKE = re.compile(r"[.~]|[A-Za-z]:\\|.{0,256}\.[a-z]{1,5}$")
# Base64 starts with '/' too (/Jalr+K7MDENG=); every piece of a path's /, _, ., - split is a
# word (home, Users, v2, SSL, oAuthToken), where base64 has capitals side by side.
_PATH_SPLIT = re.compile(r"[/_.-]+")
_PATH_PIECE = re.compile(r"[A-Z]?[a-z0-9]*+(?:[A-Z][a-z0-9]++)*+|[A-Z0-9]*+")
# test-token-value-123, MY_SECRET_2: runs of one case or digits between separators.
_WORD = r"(?:[a-z]{1,256}|[A-Z]{1,256}|[0-9]{1,256})"
_WORD_LIKE = re.compile(rf"{_WORD}(?:[_.:-]{_WORD}){{1,64}}")
# "Enter your password:", "Passwords don't match.\n": a prompt or message under a password
# name; a passphrase (correct horse battery staple) has none of these and at most 6 words.
_MESSAGE = re.compile(r"(?i)[:?.]$|[%{\\]|passw|n't|\b(?:enter|your|please|invalid|incorrect"
                      r"|wrong|must|not|confirm|match|required)\b")  # fmt: skip

# Password forms other than `name = value`; group 'v' is the value, 'pw' the name's keyword.
# Each needs one of these first (Dockerfile's `ENV PASS x` aside): code says `pass` a lot.
_PASSWORD_HINT = re.compile(r"passw|passp|pwd|pass[_-]?[0-9]{0,2}=")
_PASSWORD_NAME = rf"[\w-]{{0,40}}?(?P<pw>{_PASSWORD_NAMES}){_NUMBER_SUFFIX}"
# Server=db;User Id=sa;Password=X; (ADO.NET, ODBC), ?user=u&password=X& (JDBC, URLs): the name
# in lower-cased text (8x faster than a case-blind pattern), then the ; ? & or quote before it.
_KEY_VALUE_NAME = re.compile(r"(?P<pw>pass(?:word|wd)|pwd)[ \t]{0,8}=[ \t]{0,8}")
_KEY_VALUE_LEAD = re.compile(r"[?&;\"'][ \t]{0,8}\Z")
_KEY_VALUE = re.compile(r"[^\s;&'\"<>()=][^\s;&'\"<>()]{0,127}+(?![^\s;&'\"])")
# A ;-separated list is a connection string when it also names a server, user or database.
_CONNECTION_KEY = re.compile(
    r"(?i)(?<![\w-])(?:server|data source|host|address|uid|user(?: ?id|name)?|database|dbname"
    r"|initial catalog|dsn|driver)[ \t]{0,8}="
)
# <password>X</password>, <db-password>, <keyStorePassword>: an element holding a password.
_XML_PASSWORD = re.compile(r"(?i)<(?P<tag>[\w.:-]{0,40}?(?P<pw>pass(?:word|wd|phrase)|pwd))>"
                           r"(?P<v>[^<>\n]{1,256}+)</(?P=tag)>")  # fmt: skip
# mysql --password=X appdb (in any language: argv lists, docs); a shell word ends at a space.
_SHELL_WORD = r"(?P<v>[^\s'\"`;&|<>()]{1,128}+)(?![^\s'\"`;&|])"
_FLAG_PASSWORD = re.compile(rf"--(?<![\w-]--){_PASSWORD_NAME}={_SHELL_WORD}", re.IGNORECASE)
# PGPASSWORD=X psql ..., ENV DB_PASSWORD=X: an assignment before a command (shell, Dockerfile).
_ENV_PASSWORD = re.compile(rf"(?<![^\s;&|(]){_PASSWORD_NAME}={_SHELL_WORD}", re.IGNORECASE)
# Dockerfile's older form, ENV DB_PASSWORD X: the value is the rest of the line, quotes off.
_DOCKER_ENV = re.compile(rf"(?im)^[ \t]*ENV[ \t]+{_PASSWORD_NAME}[ \t]+[\"']?"
                         r"(?P<v>[^\s=\"'][^\n\"']{0,255}?)[\"']?[ \t]*\r?$")  # fmt: skip
# ```yaml ... ``` in markdown: a fenced block reads as the file it shows, by its info string.
# Its body runs line by line up to a line opening with its fence (or to the end, left open).
_FENCED_BLOCK = re.compile(r"(?m)^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\s`]*)[^\n]*\n"
                           r"(?P<body>(?:(?![ \t]{0,3}(?P=fence))[^\n]*+(?:\n|\Z))*+)"
                           r"(?:[ \t]{0,3}(?P=fence)[^\n]*)?")  # fmt: skip
# Other info strings name the language itself: yaml, ini, toml, env, shell, dockerfile.
_FENCE_ALIASES = dict.fromkeys(("sh", "bash", "zsh", "console"), "shell") | {
    "": "text", "txt": "text", "yml": "yaml", "dotenv": "env", "docker": "dockerfile"
}  # fmt: skip

# PEM, PKCS#8, OpenSSH and PGP markers; what lies between them is masked, not the markers.
_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_KEY_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
# A body line as files hold it: bare base64, or a string literal with a \n escape and
# concatenation glue.
_KEY_LINE = re.compile(
    r"[ \t]{0,200}[\"']?[A-Za-z0-9+/=]{4,200}(?:\\n)?[\"']?[ \t]{0,16}[+,]?[ \t]{0,16}\r?"
)
_KEY_HEADER = re.compile(r"[A-Za-z][A-Za-z-]{1,30}: .{0,200}")  # Proc-Type:, Version:
# What surrounds a body inside code: whitespace, quotes, \n escapes, + and , glue.
_KEY_GLUE = re.compile(r"(?:\\[nr]|[\s\"'+,]){0,1000}")
# A body needs 16 base64 chars in a row: `...` or prose between markers is not a key.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{16}")
# Key material as a key's lines hold it: a long run of base64.
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/]{40,}")


_NEEDLES = tuple(needle for rule in _TOKEN_RULES for needle in rule.needles)


def may_hold_secret(line: str) -> bool:
    """False only when no secret can overlap this line, unless it lies inside a private key
    (see `has_private_key`): every other rule needs a token needle or a name core on the line
    of its value. A cheap test before the full search, for callers that look at few lines."""
    return _NAME_CORE.search(line.lower()) is not None or any(n in line for n in _NEEDLES)


def has_private_key(text: str) -> bool:
    """Whether `text` holds a private key marker: the one secret that spans lines."""
    return "PRIVATE KEY" in text


def unmasked_private_key(text: str) -> bool:
    """Whether a run of base64 after a private key's BEGIN line (up to its END line) lies
    outside every secret find_secrets finds: the key rules read PEM lines, JSON strings and
    concatenated literals, not every way code can hold a key (a C macro's continued lines,
    CR LF escapes, a comment's margin). Such a file is not indexed (pix.ingest.scan)."""
    if not has_private_key(text):
        return False
    spans = [(s.start, s.end) for s in find_secrets(text)]
    for begin in _KEY_BEGIN.finditer(text):
        end = _KEY_END.search(text, begin.end())
        stop = end.start() if end else len(text)
        for run in _KEY_MATERIAL.finditer(text, begin.end(), stop):
            if not any(a <= run.start() and run.end() <= b for a, b in spans):
                return True
    return False


def find_secrets(text: str, language: str | None = None) -> list[Secret]:
    """Non-overlapping secrets sorted by start (where the rules overlap, the earliest start,
    then the longest, is kept; a repeated value's copies are then added, a copy overlapping
    a kept secret masking their union). `language` is pix's language name for the file
    (e.g. 'python', 'yaml', 'toml', 'ini', 'json', 'text', 'markdown', 'shell', None when
    unknown); it only widens what counts as an assigned value (unquoted values allowed in
    config-style files)."""
    found = [*_private_keys(text), *_tokens(text), *_literals(text, language)]
    for block in _FENCED_BLOCK.finditer(text) if language == "markdown" else ():
        info, at = block["info"].lower(), block.start("body")
        if (fenced := _FENCE_ALIASES.get(info, info)) in CONFIG_LANGUAGES:
            secrets = _literals(block["body"], fenced)
            found.extend(Secret(s.start + at, s.end + at, s.kind) for s in secrets)
    kept = _without_overlaps(found)
    copies = list(_copies(text, kept))
    return _merged([*kept, *copies]) if copies else kept


def _span_order(secret: Secret) -> tuple:
    """Earliest start first, then the longest, then the surest kind."""
    return secret.start, secret.start - secret.end, _PRIORITY[secret.kind]


def _without_overlaps(found: list[Secret]) -> list[Secret]:
    found.sort(key=_span_order)
    kept: list[Secret] = []
    for secret in found:
        if not kept or secret.start >= kept[-1].end:
            kept.append(secret)
    return kept


def _copies(text: str, secrets: list[Secret]) -> Iterator[Secret]:
    """Every place in `text` that holds a value already found to be a secret (its own
    place too: `_merged` folds it in): the same key under a name no rule reads
    (`secret_value = "..."` beside `aws_secret = "..."`) would show it, and a search for it
    would find it (audit). Values of _MIN_SECRET_CHARS or more only: a short password may be
    a word used elsewhere."""
    values = {
        text[s.start : s.end]: s.kind for s in secrets if s.end - s.start >= _MIN_SECRET_CHARS
    }
    # str.find per value: a file of 16,000 keys takes about 2 s (one regex alternation of
    # them took 8 s); files hold a few.
    for value, kind in values.items():
        at = text.find(value)
        while at >= 0:
            yield Secret(at, at + len(value), kind)
            at = text.find(value, at + len(value))


def _merged(spans: list[Secret]) -> list[Secret]:
    """Overlapping spans as their union (the kind of the one that starts first): a copy that
    overlaps a longer secret found by a rule must not leave that secret's tail shown."""
    spans.sort(key=_span_order)
    out: list[Secret] = []
    for span in spans:
        if out and span.start < out[-1].end:
            last = out[-1]
            out[-1] = Secret(last.start, max(last.end, span.end), last.kind)
        else:
            out.append(span)
    return out


def _shannon_entropy(value: str) -> float:
    """Bits per character of `value`'s own character distribution."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def _looks_random(value: str, min_bits: float = _ENTROPY_BITS) -> bool:
    """Whether a literal under a secret name looks like generated key material, not a URL,
    path, dotted or word_like_name-2, hash-prefixed digest, format string or repeated data."""
    return (
        len(value) >= _MIN_SECRET_CHARS
        and _mixed(value)
        and _SECRET_CHARS.fullmatch(value) is not None
        and not _HASH_PREFIX.match(value)
        and not _is_placeholder(value)
        and not _path_like(value)
        and not _DOTTED_NAME.fullmatch(value)
        and not _WORD_LIKE.fullmatch(value)
        and _shannon_entropy(value) >= min_bits
    )


def _tokens(text: str) -> Iterator[Secret]:
    for rule in _TOKEN_RULES:
        if not any(needle in text for needle in rule.needles):
            continue
        group = "v" if "v" in rule.pattern.groupindex else 0
        for m in rule.pattern.finditer(text):
            if rule.check is None or rule.check(m[group]):
                yield Secret(m.start(group), m.end(group), rule.kind)


def _is_placeholder(value: str) -> bool:
    lowered = value.lower()
    return (
        lowered in _PLACEHOLDER_WORDS
        or set(lowered) <= _MASK_CHARS
        or lowered.startswith(("your_", "your-", "my_", "my-", "example"))
        or _PLACEHOLDER.search(value) is not None
    )


def _path_like(value: str) -> bool:
    if value.startswith("/"):
        return all(_PATH_PIECE.fullmatch(piece) for piece in _PATH_SPLIT.split(value))
    return _PATH_LIKE.match(value) is not None


def _password_value(value: str, name: str, quoted: bool) -> bool:
    """Whether a value under a password name (its keyword `name`) is a literal password."""
    if not value or _is_placeholder(value) or value.lower() == name.lower():
        return False  # PASSWORD = "password" names a field
    if any(c.isspace() for c in value):  # a passphrase, or a prompt / message about one
        words = value.split()
        return quoted and len(words) <= 6 and not _MESSAGE.search(" ".join(words))
    if name.lower() == "pwd" and _path_like(value):
        return False  # PWD=/home/me is the working directory
    return quoted or _plain_word(value)


def _literals(text: str, language: str | None) -> Iterator[Secret]:
    """Values given to a password or secret name, in every form `language` allows."""
    lowered = text.lower()
    if len(lowered) != len(text):  # 'İ' lower-cases to two characters: keep offsets aligned
        lowered = "".join(c if len(c.lower()) > 1 else c.lower() for c in text)
    yield from _assignments(text, lowered, language in CONFIG_LANGUAGES)
    if language != "dockerfile" and not _PASSWORD_HINT.search(lowered):
        return
    for m in _KEY_VALUE_NAME.finditer(lowered):
        lead = _KEY_VALUE_LEAD.search(lowered, max(0, m.start() - 9), m.start())
        value = _KEY_VALUE.match(text, m.end())
        if lead is None or value is None or not _password_value(value[0], m["pw"], False):
            continue
        near = _CONNECTION_KEY.search(text, max(0, m.start() - 200), m.end() + 200)
        if lead[0][0] in "?&" or near:  # a ;-list needs Server= or User Id= near it
            yield Secret(*value.span(), "connection_password")
    rules = [(_XML_PASSWORD, True), (_FLAG_PASSWORD, False)]
    rules += [(_ENV_PASSWORD, False)] if language in ("shell", "dockerfile") else []
    rules += [(_DOCKER_ENV, True)] if language == "dockerfile" else []
    for pattern, literal in rules:  # a literal value may hold spaces: <password>a b</password>
        for m in pattern.finditer(text):
            if _password_value(m["v"], m["pw"], quoted=literal):
                yield Secret(m.start("v"), m.end("v"), "password")


def _assignments(text: str, lowered: str, bare_ok: bool) -> Iterator[Secret]:
    for m in _assignment_matches(text, lowered):
        group = next(g for g in ("dq", "sq", "bq", "bare") if m[g] is not None)
        value = m[group]
        if group == "bare" and not (bare_ok and _plain_word(value)):
            continue  # a bare name is code in code; in config it may be a call or a YAML tag
        if "f" in (m["prefix"] or "").lower() or not value or _is_placeholder(value):
            continue  # an f-string is a template
        if m["pw"] is not None:
            if _password_value(value, m["pw"], quoted=group != "bare"):
                yield Secret(m.start(group), m.end(group), "password")
        elif _looks_random(value):
            # The name left of its keyword: a publicKeyToken is published on purpose.
            left = _NAME_LEFT.search(text, max(0, m.start() - 40), m.start())
            if left is None or "public" not in left[0].lower():
                yield Secret(m.start(group), m.end(group), "secret")


def _assignment_matches(text: str, lowered: str) -> Iterator[re.Match[str]]:
    # Finding the name cores case-sensitively in lower-cased text, then matching only there,
    # is ~10x faster than running the case-insensitive pattern at every position.
    done = 0
    for hit in _NAME_CORE.finditer(lowered):
        start = hit.start()
        if start < done:
            continue
        if hit[0] == "key":
            prefix = _KEY_PREFIX.search(lowered, max(0, start - 12), start)
            if prefix is None:
                continue
            start = prefix.start()
        m = _ASSIGNMENT.match(text, start)
        if m is not None:
            done = m.end()
            yield m


def _plain_word(value: str) -> bool:
    # In .txt docs `password = forms.CharField(`, `password=None):`, `self.password` are code;
    # in YAML !tag, &anchor, *alias, | and > are syntax.
    return not (
        any(c in value for c in "()[]{}<>")
        or value[0] in "!&*|>~"
        or value.rstrip(":,").lower() in _PLACEHOLDER_WORDS
        or _DOTTED_NAME.fullmatch(value)
    )


def _private_keys(text: str) -> Iterator[Secret]:
    if "PRIVATE KEY" not in text:
        return
    markers = sorted(
        [(m.start(), m.end(), True) for m in _KEY_BEGIN.finditer(text)]
        + [(m.start(), m.end(), False) for m in _KEY_END.finditer(text)]
    )
    for i, (start, end, is_begin) in enumerate(markers):
        if is_begin:  # the body runs down to the next marker or the chunk's end
            limit = markers[i + 1][0] if i + 1 < len(markers) else len(text)
            yield from _key_body(text, end, limit)
        elif i == 0 or not markers[i - 1][2]:  # an END whose BEGIN is above the chunk
            yield from _key_body(text, start, markers[i - 1][1] if i else 0)


def _key_body(text: str, pos: int, limit: int) -> Iterator[Secret]:
    """The key lines from a marker at pos towards limit, up to a blank or a non-key line."""
    lo, hi = len(text), 0
    seen_base64 = False
    for start, end in _lines_from(text, pos, limit):
        line = text[start:end]
        if _KEY_GLUE.fullmatch(line) or _KEY_HEADER.fullmatch(line):
            if seen_base64:
                break
            continue  # the rest of the marker's line, armor headers and the blank after them
        pieces = line.replace("\\n", "\n").split("\n")  # a key in a JSON string is one line
        if not all(_KEY_GLUE.fullmatch(p) or _KEY_LINE.fullmatch(p) for p in pieces):
            break
        seen_base64 = seen_base64 or _BASE64_RUN.search(line) is not None
        lo, hi = min(lo, start), max(hi, end)
    if seen_base64:
        yield Secret(*_trim(text, lo, hi), "private_key")


def _lines_from(text: str, pos: int, limit: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each line from pos towards limit; the first is the rest of pos's line."""
    if limit >= pos:
        while pos <= limit:
            end = text.find("\n", pos, limit)
            end = limit if end < 0 else end
            yield pos, end
            pos = end + 1
    else:
        while pos >= limit:
            start = max(text.rfind("\n", limit, pos) + 1, limit)
            yield start, pos
            pos = start - 1


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink a body span past quotes, \\n escapes and concatenation glue at both ends."""
    start = _KEY_GLUE.match(text, start, end).end()
    while end > start:
        if text[end - 1] in " \t\r\n\"'+,":
            end -= 1
        elif text[end - 2 : end] in ("\\n", "\\r") and end - 2 >= start:
            end -= 2
        else:
            break
    return start, end
