"""Secret detection for output-time redaction (pix/output/redact.py).

Every fake credential below is assembled from pieces at run time, so this file holds no string
that a push-protection scanner would take for a leaked key.
"""

from __future__ import annotations

import base64
import hashlib

import pytest

from pix.ingest.redact import KINDS, Secret, find_secrets, has_private_key, may_hold_secret


def found(text: str, language: str | None = None) -> list[tuple[str, str]]:
    return [(s.kind, text[s.start : s.end]) for s in find_secrets(text, language)]


B62 = "Fake0123456789abcdefGHIJKLmnopqrSTUVwxyz"  # base62 filler; never a real key

AWS = "AKIA" + "EXAMPLEFAKE12345"
GITHUB = "ghp" + "_" + (B62 * 2)[:36]
GITHUB_PAT = "github" + "_pat_" + "11FAKE0000" + "_" + (B62 * 2)[:59]
GITLAB = "glpat" + "-" + B62[:20]
SLACK = "xoxb" + "-" + "000000000000-0000000000000-" + B62[:24]
SLACK_HOOK_PATH = "T00000000/B00000000/" + B62[:24]
STRIPE = "sk" + "_live_" + B62[:24]
GOOGLE = "AIza" + (B62 * 2)[:35]
ANTHROPIC = "sk-" + "ant-api03-" + (B62 * 3)[:93]
OPENAI = "sk-" + "proj-" + (B62 * 2)[:48]
NPM = "npm" + "_" + (B62 * 2)[:36]
PYPI = "pypi-" + "AgEIcHlwaS5vcmc" + (B62 * 3)[:70]
SENDGRID = "SG" + "." + B62[:22] + "." + (B62 * 2)[:43]
JWT = "eyJ" + "hbGciOiJIUzI1NiJ9" + "." + "eyJ" + "zdWIiOiJmYWtlIn0" + "." + B62[:30]
BASIC = base64.b64encode(b"fakeuser:fakepass").decode()
BEARER = B62[:28]
RANDOM = "Zq3xR8vT2mKp9LwN4bYc"  # 20 random base62 chars, 4.3 bits/char
SLASHED = "/" + RANDOM[:12] + "/" + RANDOM[12:] + "+" + B62[:18]  # base64 that starts with '/'
RAILS = hashlib.sha256(b"rails").hexdigest()  # secret_key_base is hex
FENCE = "`" * 3

# (text, language, kind, the exact value that must be masked)
POSITIVE = [
    (f'aws_id = "{AWS}"', "python", "aws_access_key", AWS),
    (f"export GH={GITHUB}", "shell", "github_token", GITHUB),
    (f"token: {GITHUB_PAT}", "yaml", "github_token", GITHUB_PAT),
    (f"GITLAB = '{GITLAB}'", "python", "gitlab_token", GITLAB),
    (f"slack('{SLACK}')", "python", "slack_token", SLACK),
    (f"url = 'https://hooks.slack.com/services/{SLACK_HOOK_PATH}'", "python", "slack_webhook",
     SLACK_HOOK_PATH),
    (f"stripe.api_key = '{STRIPE}'", "python", "stripe_key", STRIPE),
    (f"const key = '{GOOGLE}';", "javascript", "google_api_key", GOOGLE),
    (f"client = Anthropic(api_key='{ANTHROPIC}')", "python", "anthropic_key", ANTHROPIC),
    (f"OPENAI = \"{OPENAI}\"", "python", "openai_key", OPENAI),
    (f"//registry.npmjs.org/:_authToken={NPM}", "text", "npm_token", NPM),
    (f"password = {PYPI}", "ini", "pypi_token", PYPI),
    (f'SENDGRID = "{SENDGRID}"', "python", "sendgrid_key", SENDGRID),
    (f"cookie = '{JWT}'", "python", "jwt", JWT),
    (f'headers = {{"Authorization": "Basic {BASIC}"}}', "python", "basic_auth", BASIC),
    (f"curl -H 'Authorization: Bearer {BEARER}' https://x", "shell", "bearer_token", BEARER),
    ("DATABASE_URL = 'postgres://app:Fake-Pw123@db.example.com:5432/app'", "python",
     "connection_password", "Fake-Pw123"),
    ('redis_url: "redis://:hunter2@cache:6379/0"', "yaml", "connection_password", "hunter2"),
    ('password = "hunter2"', "python", "password", "hunter2"),
    ("db_password: 's3cr3t!'", "yaml", "password", "s3cr3t!"),
    ('{"password": "correct-horse"}', "json", "password", "correct-horse"),
    ('login(user="ann", password="pw123")', "python", "password", "pw123"),
    ("DB_PASSWORD=hunter2", "text", "password", "hunter2"),
    ("password = hunter2  # local only", "ini", "password", "hunter2"),
    ('password = "hunter2"', "toml", "password", "hunter2"),
    ('const dbPassword = "letmein";', "javascript", "password", "letmein"),
    ('password: str = "hunter2"', "python", "password", "hunter2"),
    ('settings["PASSWORD"] = "hunter2"', "python", "password", "hunter2"),
    ('"new_password1": "hunter22"', "json", "password", "hunter22"),
    ("MYSQL_PWD='abc123'", "shell", "password", "abc123"),
    ('passphrase => "opensesame2"', "ruby", "password", "opensesame2"),
    (f'client_secret = "{RANDOM}"', "python", "secret", RANDOM),
    (f"SECRET_KEY: {RANDOM}", "yaml", "secret", RANDOM),
    (f'"accessToken": "{RANDOM}"', "json", "secret", RANDOM),
    (f"x-api-key: {RANDOM}", "text", "secret", RANDOM),
    (f'AWS_SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/{RANDOM}"', "python", "secret",
     f"wJalrXUtnFEMI/K7MDENG/{RANDOM}"),
    (f'signing_key = b"{RANDOM}"', "python", "secret", RANDOM),
]  # fmt: skip


# Forms added after the first set. Kept out of POSITIVE: tests/test_redaction_paths.py seeds one
# fixture file per POSITIVE case (with extensions for its languages only) and discovers at most 50.
MORE_POSITIVE = [
    # A password holding '@': up to the last '@' before the host.
    ("url = 'postgres://app:p@ssword1@db/x'", "python", "connection_password", "p@ssword1"),
    # key=value connection strings: ADO.NET, ODBC, JDBC and URL queries; XML elements.
    ('conn = "Server=db;User Id=sa;Password=MyS3cret!;"', "csharp", "connection_password",
     "MyS3cret!"),
    ('url = "jdbc:mysql://db:3306/app?user=root&password=S3cret9&useSSL=true"', "java",
     "connection_password", "S3cret9"),
    ('odbc = "Driver={ODBC Driver 18};Server=db; Uid=sa; Pwd=MyS3cret!"', "python",
     "connection_password", "MyS3cret!"),
    ("https://api.example.com/login?user=ann&passwd=S3cret9", "text", "connection_password",
     "S3cret9"),
    ("<password>hunter2</password>", "xml", "password", "hunter2"),
    ("  <Password>hunter2</Password>", "xml", "password", "hunter2"),
    ("<db-password>hunter2</db-password>", "xml", "password", "hunter2"),
    # Rails' secret_key_base, a numbered name, a Rust &str type annotation.
    (f"production:\n  secret_key_base: {RAILS}\n", "yaml", "secret", RAILS),
    ('user_password_1 = "hunter2"', "python", "password", "hunter2"),
    ('let password: &str = "hunter2";', "rust", "password", "hunter2"),
    ("const PASSWORD: &'static str = \"hunter2\";", "rust", "password", "hunter2"),
    # Base64 that starts with '/' is not a path.
    (f'aws_secret_access_key = "{SLASHED}"', "python", "secret", SLASHED),
    # Passphrases: quoted, a few words, nothing of a message.
    ('password = "correct horse battery staple"', "python", "password",
     "correct horse battery staple"),
    ('ssh_passphrase => "open sesame"', "ruby", "password", "open sesame"),
    # Shell words end at a space; --name=value anywhere, NAME=value cmd in shell.
    ("mysql --password=hunter2 appdb", "shell", "password", "hunter2"),
    ('subprocess.run(["mysql", "--db-password=hunter2", "appdb"])', "python", "password",
     "hunter2"),
    ("PGPASSWORD=hunter2 psql -h db app", "shell", "password", "hunter2"),
    ("env MYSQL_PWD=hunter2 mysql -u root", "shell", "password", "hunter2"),
    # Dockerfile ENV, both forms; the value ends at a space in the newer one.
    ("ENV DB_PASSWORD hunter2", "dockerfile", "password", "hunter2"),
    ("ENV DB_PASSWORD=hunter2", "dockerfile", "password", "hunter2"),
    ("ENV DB_PASSWORD=hunter2 DB_USER=app", "dockerfile", "password", "hunter2"),
    # Markdown: a fenced block of config or shell reads as that file.
    (f"Config:\n\n{FENCE}yaml\ndb:\n  password: hunter2\n{FENCE}\n", "markdown", "password",
     "hunter2"),
    (f"{FENCE}\npassword = hunter2\n{FENCE}\n", "markdown", "password", "hunter2"),
    (f"{FENCE}ini\npassword = hunter2\n{FENCE}\n", "markdown", "password", "hunter2"),
    ("~~~env\nDB_PASSWORD=hunter2\n~~~\n", "markdown", "password", "hunter2"),
    (f"{FENCE}sh\nPGPASSWORD=hunter2 psql app\n{FENCE}\n", "markdown", "password", "hunter2"),
    (f"{FENCE}dockerfile\nENV DB_PASSWORD hunter2\n{FENCE}\n", "markdown", "password",
     "hunter2"),
    (f"text\n{FENCE}yaml\npassword: hunter2", "markdown", "password", "hunter2"),  # left open
]  # fmt: skip


@pytest.mark.parametrize(("text", "language", "kind", "value"), POSITIVE + MORE_POSITIVE)
def test_positive(text: str, language: str, kind: str, value: str) -> None:
    assert found(text, language) == [(kind, value)]


def test_every_kind_has_a_positive_case() -> None:
    covered = {kind for _, _, kind, _ in POSITIVE} | {"private_key"}
    assert covered == set(KINDS)


NOT_LITERAL = [
    ("password = get_password()", "python"),
    ("password = self.password", "python"),
    ("password=None", "python"),
    ("def connect(user, password=None):", "text"),  # a signature quoted in .txt docs
    ("password = forms.CharField(widget=forms.PasswordInput)", "text"),
    ('os.environ["PASSWORD"]', "python"),
    ('os.environ.get("DB_PASSWORD", "")', "python"),
    ("password: str", "python"),
    ("password: Optional[str] = None", "python"),
    ('password = f"{user}-secret"', "python"),
    ("password: ${DB_PASSWORD}", "yaml"),
    ("password: ${{ secrets.PYPI_PASSWORD }}", "yaml"),
    ('password: "{{ password }}"', "yaml"),
    ("password: !vault |", "yaml"),
    ("password: null", "yaml"),
    ('password = ""', "python"),
    ("password = ''", "python"),
    ('password = "<password>"', "python"),
    ('password = "{password}"', "python"),
    ('password = "%s"', "python"),
    ('password = "***"', "python"),
    ('password = "xxxxxxxx"', "python"),
    ("PASSWORD=$PASSWORD", "text"),
    ("PASSWORD=hunter2", "python"),  # bare words are names in code
    ("PASSWORD=hunter2", None),
    ('if password == "secret":', "python"),
    ('PASSWORD = "password"', "python"),  # a field name, not a password
    ('password_reset_url = "reset/done"', "python"),
    ('AUTH_PASSWORD_VALIDATORS = "x1"', "python"),
    ("PWD=/home/user/project", "shell"),
    ('msg = "Enter your password: "', "python"),
    ('CSRF_COOKIE_NAME = "csrftoken"', "python"),
    ('token_type = "Bearer"', "python"),
    ('header = "Authorization"', "python"),
    ('api_key = "${API_KEY}"', "python"),
    ('token = "https://example.com/oauth/token/0123456789"', "python"),
    ('secret = "/etc/app/secrets/key0123456789.pem"', "python"),
    ('token_generator = "myapp.tokens.TokenGenerator2"', "python"),
    ('token = "myapp.tokens.TokenGenerator2"', "python"),
    ('token = "test-token-value-123"', "python"),
    ('SECRET_KEY = "django_tests_secret_key"', "python"),
    ('api_key = "{}:{}-0123456789abc".format(a, b)', "python"),
    ('token = "%(user)s-%(ts)s-0123456789"', "python"),
    ('secret = "aaaaaaaaaaaaaaaaaaaa1"', "python"),
    ('secret = "0000000000000000000000000000000000000001"', "python"),
    ('publicKeyToken="6595b64144ccf1df"', "python"),
    ('token = "sha256:' + hashlib.sha256(b"x").hexdigest() + '"', "python"),
    ('token = "sha512-' + base64.b64encode(hashlib.sha512(b"x").digest()).decode() + '"', "json"),
    # URLs that hold an '@' but no password.
    ("url = 'https://example.com:8443/users/@me'", "python"),
    ("url = 'http://host:8080/share?to=a@b.org'", "python"),
    ("pip install git+ssh://git@github.com:22/org/repo@v1.0", "shell"),
    # key=value look-alikes: empty, templated, code, a ;-list that is no connection string.
    ('conn = "Server=db;User Id=sa;Password=;"', "csharp"),
    ('conn = "Server=db;User Id=sa;Password={0};"', "csharp"),
    ('conn = "Server=db;User Id=sa;Password=" + password + ";"', "csharp"),
    ('url = "?user=root&password=" + encodeURIComponent(pw)', "javascript"),
    ('url = f"?user={user}&password={password}"', "python"),
    ("a.b=1;pwd=n;c.d=e(pwd);", "javascript"),  # minified code
    ("if (ok) { x = 1;pwd=getcwd(buf, n); }", "c"),
    ('if x: password == "x"', "text"),
    ("<password></password>", "xml"),
    ("<password>${DB_PASSWORD}</password>", "xml"),
    ("<password>Enter your password</password>", "xml"),
    ("<passwordPolicy>strict1</passwordPolicy>", "xml"),
    # Rails and Rust look-alikes.
    ('secret_key_base: <%= ENV["SECRET_KEY_BASE"] %>', "yaml"),
    ("let password: &str = &args[1];", "rust"),
    ('password_2fa = "123456"', "python"),  # the name goes on past its number
    # Paths that start with '/': words between separators, camelCase included.
    ('secret = "/Users/Ann/Library/Keys2024/App"', "python"),
    ('api_key = "/api/v2/oAuthToken/refresh1"', "python"),
    ('token = "/run/secrets/db_token_v2"', "python"),
    # Messages and prompts under a password name, not passphrases.
    ('password = "Invalid password, try again"', "python"),
    ('password = "Please choose another one"', "python"),
    ('password = "Passwords do not match"', "python"),
    ('password = "Wrong credentials?"', "python"),
    ('password = "Your new one"', "python"),
    ('password = "Type it twice to confirm."', "python"),
    ('password = "it must be eight characters or more"', "python"),
    ('password = "one two three four five six seven"', "python"),  # more than 6 words
    ('password = "%(user)s has a new one"', "python"),
    ("topics = {'pass': 'The pass statement\\n'}", "python"),  # an escape: text, not a secret
    # Shell look-alikes: -pX is ambiguous, --name X has no '=', refs and files are no values.
    ("mysql -phunter2 appdb", "shell"),
    ("mysql --db-password hunter2 appdb", "shell"),
    ("mysql --password=$DB_PASSWORD appdb", "shell"),
    ("mysql --password=PASSWORD appdb", "shell"),
    ("mysql --password-file=/run/secrets/pw appdb", "shell"),
    ("tool --bypass=on --no-password", "shell"),
    ('export PASSWORD="$(pass show db)"', "shell"),
    ("PASSWORD=$(cat /run/secrets/pw) psql", "shell"),
    ("OLDPWD=/srv/app cd -", "shell"),
    ("ENV DB_PASSWORD_FILE /run/secrets/db", "dockerfile"),
    ("ENV DB_PASSWORD $DB_PASSWORD", "dockerfile"),
    ("PGPASSWORD=hunter2 psql", "python"),  # bare words are names in code
    # Markdown prose and code fences stay as strict as code.
    ("Set the password: hunter2\n", "markdown"),
    (f"{FENCE}python\npassword = hunter2\n{FENCE}\n", "markdown"),
    (f"{FENCE}yaml\nx: 1\n{FENCE}\npassword: hunter2\n", "markdown"),
]


@pytest.mark.parametrize(("text", "language"), NOT_LITERAL)
def test_not_a_literal_secret(text: str, language: str | None) -> None:
    assert found(text, language) == []


@pytest.mark.parametrize(
    "password", ["${DB_PASSWORD}", "{password}", "<password>", "%s", "***", "$PASSWORD"]
)
def test_connection_string_placeholders(password: str) -> None:
    assert found(f"url = 'postgres://app:{password}@db:5432/app'", "python") == []


def test_connection_password_scan_stays_linear() -> None:
    # Every '://' may try 128 characters back to an '@', never more.
    text = ("x://u:" + "p@" * 40 + "/ ") * 2000 + "://:" + "a" * 100_000
    secrets = find_secrets(text, "python")
    assert len(secrets) == 2000 and {s.end - s.start for s in secrets} == {79}


def test_markdown_fence_offsets_point_into_the_whole_text() -> None:
    text = f"# Setup\n\nRun:\n\n{FENCE}bash\nexport DB_PASSWORD=hunter2\n{FENCE}\n"
    assert [text[s.start : s.end] for s in find_secrets(text, "markdown")] == ["hunter2"]


@pytest.mark.parametrize(
    "text",
    [
        'headers["Authorization"] = "Bearer " + token',
        'headers = {"Authorization": f"Bearer {token}"}',
        "Authorization: Bearer <token>",
        "Use Bearer authentication_scheme for the API.",
        "Basic authentication is supported.",
        "Authorization: Basic Zm9vYmFy",  # decodes to 'foobar': no user:password
    ],
)
def test_auth_header_non_secrets(text: str) -> None:
    assert found(text, "markdown") == []


BODY = [B62[:32], B62[8:40], "Zm9v" + B62[:12] + "=="]
KEY_BODY = "\n".join(BODY)
BEGIN, END = "-----BEGIN RSA " + "PRIVATE KEY-----", "-----END RSA " + "PRIVATE KEY-----"


def test_private_key_body_between_markers() -> None:
    text = f"key = '''\n{BEGIN}\n{KEY_BODY}\n{END}\n'''\n"
    assert found(text, "python") == [("private_key", KEY_BODY)]


def test_private_key_without_end_stops_at_blank_line() -> None:
    text = f"{BEGIN}\n{KEY_BODY}\n\ndef after():\n    return 1\n"
    assert found(text, "python") == [("private_key", KEY_BODY)]


def test_private_key_without_end_runs_to_the_end_of_the_chunk() -> None:
    text = f"x = 1\n{BEGIN}\n{BODY[0]}\n{BODY[1]}"
    assert found(text, "text") == [("private_key", f"{BODY[0]}\n{BODY[1]}")]


def test_private_key_without_begin() -> None:
    text = f"{BODY[1]}\n{BODY[2]}\n{END}\n\nmore = 2\n"
    assert found(text, "text") == [("private_key", f"{BODY[1]}\n{BODY[2]}")]


def test_private_key_in_a_json_string_and_in_concatenated_literals() -> None:
    escaped = "\\n".join(BODY)
    text = f'{{"private_key": "{BEGIN}\\n{escaped}\\n{END}\\n"}}'
    assert found(text, "json") == [("private_key", escaped)]
    text = f'KEY = (\n    "{BEGIN}\\n"\n    "{BODY[0]}\\n"\n    "{BODY[1]}\\n"\n    "{END}"\n)'
    assert found(text, "python") == [("private_key", f'{BODY[0]}\\n"\n    "{BODY[1]}')]


def test_pgp_private_key_with_armor_headers() -> None:
    begin, end = (
        "-----BEGIN PGP " + "PRIVATE KEY BLOCK-----",
        "-----END PGP " + "PRIVATE KEY BLOCK-----",
    )
    text = f"{begin}\nVersion: GnuPG v2\n\n{KEY_BODY}\n{end}\n"
    assert found(text, "text") == [("private_key", KEY_BODY)]


def test_private_key_markers_in_code_are_not_a_key() -> None:
    text = (
        f'if line == "{BEGIN}":\n    inside = True\nelif line == "{END}":\n    inside = False\n'
        f'HEADER = "{BEGIN}"\n\nparse(HEADER)\n'
    )
    assert found(text, "python") == []


def _b64(seed: bytes, size: int = 64) -> str:
    return base64.b64encode(hashlib.shake_256(seed).digest(size)).decode()


def test_false_positive_corpus_is_clean() -> None:
    sha = hashlib.sha1(b"pix").hexdigest()
    sha256 = hashlib.sha256(b"pix").hexdigest()
    samples = {
        "package-lock.json": (
            f'"node_modules/left-pad": {{\n  "version": "1.3.0",\n'
            f'  "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",\n'
            f'  "integrity": "sha512-{_b64(b"lp")}"\n}}'
        ),
        "poetry.lock": f'files = [\n    {{file = "a-1.0.tar.gz", hash = "sha256:{sha256}"}},\n]',
        "uv.lock": f'sdist = {{ url = "https://f/a.tar.gz", hash = "sha256:{sha256}", size = 9 }}',
        "requirements.txt": f"requests==2.32.3 \\\n    --hash=sha256:{sha256}",
        "gitlog.txt": f"commit {sha}\nMerge: {sha[:7]} {sha[7:14]}\n",
        "pin.py": f'REVISION = "{sha}"\nCOMMIT_SHA = "{sha}"\ncommit: "{sha}"',
        "ids.py": (
            'id = "123e4567-e89b-12d3-a456-426614174000"\n'
            'request_id = "550e8400e29b41d4a716446655440000"\n'
            "tokenizer = Tokenizer(vocab_size=32000)\n"
        ),
        "test_data.py": (
            f'data = "SGVsbG8sIFdvcmxkIQ=="\npayload = "{_b64(b"p", 48)}"\n'
            f'blob = b"{_b64(b"b", 96)}"\nmd5 = "d41d8cd98f00b204e9800998ecf8427e"\n'
            f'checksum = "{sha256}"\nsha256_digest = "{sha256}"\n'
        ),
        "versions.toml": 'version = "1.2.3rc4"\nrequires-python = ">=3.11"\nkey = "value"\n',
        "style.css": ".a { color: #ff00aa; background: #0f0; }\n",
        "settings.py": (
            'TOKEN_URL = "https://example.com/oauth/token"\n'
            "SECRET_KEY_FALLBACKS = []\nsecret_key = settings.SECRET_KEY\n"
            'password_hasher = "django.contrib.auth.hashers.PBKDF2PasswordHasher"\n'
            'token_path = "~/.config/app/token.json"\n'
            'api_key_header = "X-API-Key"\n'
        ),
        "views.py": (
            'token = request.headers.get("X-Token")\n'
            'logger.info("token=%s", token)\n'
            'msg = f"password for {user} changed"\n'
        ),
    }
    from pix.ingest.chunk import language_for_path

    flagged = {path: found(text, language_for_path(path)) for path, text in samples.items()}
    assert flagged == {path: [] for path in samples}


def test_overlap_keeps_earliest_then_longest_then_specific_kind() -> None:
    # The assignment and the format span the same value: the specific kind wins.
    assert found(f'api_key = "{GOOGLE}"', "python") == [("google_api_key", GOOGLE)]
    assert found(f"Authorization: Bearer {JWT}") == [("jwt", JWT)]
    # A password literal holding a URL: the earlier, longer span wins.
    text = 'db_password = "postgres://u:pw123@h"'
    assert found(text, "python") == [("password", "postgres://u:pw123@h")]


def test_spans_are_sorted_and_disjoint() -> None:
    text = f'a = "{AWS}"\npassword = "hunter2"\nb = "{GITHUB}"\n' * 3
    secrets = find_secrets(text, "python")
    assert len(secrets) == 9
    assert all(a.end <= b.start for a, b in zip(secrets, secrets[1:], strict=False))
    assert secrets[0] == Secret(text.index(AWS), text.index(AWS) + len(AWS), "aws_access_key")


def test_offsets_survive_text_whose_lower_case_is_longer() -> None:
    text = 'İstanbul = 1\npassword = "hunter2"\n'  # 'İ'.lower() is two characters
    assert found(text, "python") == [("password", "hunter2")]


def test_format_embedded_in_longer_blob_is_not_a_token() -> None:
    blob = _b64(b"x", 30) + AWS + _b64(b"y", 30)
    assert found(f'integrity = "sha512-{blob}"', "json") == []


@pytest.mark.parametrize(("text", "language", "kind", "value"), POSITIVE + MORE_POSITIVE)
def test_the_cheap_line_test_never_misses_a_line_holding_a_secret(text, language, kind, value):
    # pix discover skips the full search when no matched line passes may_hold_secret: every
    # line that any secret touches must pass it (private keys, which span lines, aside)
    assert not has_private_key(text)
    starts = [0, *(i + 1 for i, c in enumerate(text) if c == "\n")]
    for secret in find_secrets(text, language):
        for number, start in enumerate(starts):
            end = starts[number + 1] - 1 if number + 1 < len(starts) else len(text)
            if start < secret.end and secret.start < end:
                assert may_hold_secret(text[start:end]), (kind, text[start:end])


def test_the_cheap_line_test_passes_ordinary_lines_by():
    for line in ("def __init__(self, items):", "raise ValueError(msg)", "x = 0x1F2E", "# TODO"):
        assert not may_hold_secret(line)
    assert has_private_key("-----BEGIN RSA " + "PRIVATE KEY-----")


def test_a_copy_of_a_secret_never_uncovers_a_longer_one_it_overlaps() -> None:
    """The copy of `password`'s value starts inside the URL before its connection password
    does, and ends before it: the union is masked, not the copy alone (review)."""
    text = 'password = "admin:0123456789ab"\nurl = "redis://admin:0123456789abLEAKEDTAIL99@host"\n'
    [first, second] = find_secrets(text, "python")
    assert text[first.start : first.end] == "admin:0123456789ab"
    assert text[second.start : second.end] == "admin:0123456789abLEAKEDTAIL99"
