"""Path priors outside Python, end to end: a real repository indexed into real SQLite, asked
in file mode. Build and package metadata, a C project's regress/ folder, benchmark folders, a
.NET test project, a man page, translation catalogs, a license text and vector drawings name the
same words as the implementation; the implementation must come first, and --no-priors must give
those files their plain scores back."""

from __future__ import annotations

import pytest
from conftest import bm25_files, keyword_indexed

from pix.retrieve.priors import ROLE_FACTORS

WORDS = "websocket reconnect backoff jitter"

FILES = {
    # The implementation says it once, in code.
    "src/Client/Reconnect.cs": (
        "namespace Client;\n\npublic sealed class Reconnect\n{\n"
        "    // websocket reconnect with backoff and jitter\n"
        "    public TimeSpan Delay(int attempt) => TimeSpan.FromSeconds(attempt);\n}\n"
    ),
    # Metadata, tests and benchmarks repeat the words, several times over.
    "package.json": (
        '{\n  "name": "websocket-reconnect",\n  "description": "websocket reconnect backoff'
        ' jitter, websocket reconnect backoff jitter",\n  "keywords": ["websocket",'
        ' "reconnect", "backoff", "jitter"]\n}\n'
    ),
    ".github/workflows/build.yml": (
        "name: websocket reconnect backoff jitter\non: push\njobs:\n  build:\n"
        "    runs-on: ubuntu-latest\n    steps:\n      - run: make websocket reconnect backoff\n"
    ),
    "src/Client.Tests/ReconnectTests.cs": (
        "public class ReconnectTests\n{\n    // websocket reconnect backoff jitter\n"
        "    // websocket reconnect backoff jitter\n    public void Delay() { }\n}\n"
    ),
    "regress/reconnect.sh": (
        "#!/bin/sh\n# websocket reconnect backoff jitter\necho websocket reconnect backoff jitter\n"
    ),
    "benchmarks/reconnect.cs": (
        "// websocket reconnect backoff jitter\n// websocket reconnect backoff jitter\n"
        "class Bench { }\n"
    ),
    # .NET analyzer settings describe every rule in prose.
    "eng/analyzers/Library.globalconfig": (
        "# websocket reconnect backoff jitter\n# websocket reconnect backoff jitter\n"
        "dotnet_diagnostic.CA1000.severity = none\n"
    ),
    # A lock file lists the package by name, with its dependencies.
    "bun.lock": (
        '{"packages": {"websocket-reconnect": ["websocket reconnect backoff jitter"],\n'
        '  "jitter": ["websocket reconnect backoff jitter"]}}\n'
    ),
    # A man page beside the code (tmux.1) documents every option by name.
    "client.1": (
        ".Dd $Mdocdate$\n.Sh WEBSOCKET RECONNECT\nwebsocket reconnect backoff jitter\n"
        ".Pp\nwebsocket reconnect backoff jitter\n"
    ),
    # Build files whose names end in .txt are build files, not prose.
    "CMakeLists.txt": (
        "project(websocket_reconnect)\n# websocket reconnect backoff jitter\n"
        "add_library(websocket reconnect.c backoff.c jitter.c)\n"
    ),
    "docs/requirements.txt": "websocket-reconnect-backoff-jitter==1.0\nsphinx\n",
    # Translation catalogs repeat every message, in every language.
    "locale/fr/LC_MESSAGES/client.po": (
        'msgid "websocket reconnect backoff jitter"\nmsgstr "websocket reconnect backoff jitter"\n'
    ),
    "web/locales/de.yml": (
        "de:\n  reconnect: websocket reconnect backoff jitter\n"
        "  jitter: websocket reconnect backoff jitter\n"
    ),
    # A license text is prose, though it has no extension.
    "COPYING": (
        "websocket reconnect backoff jitter is free software: you can redistribute it.\n"
        "websocket reconnect backoff jitter comes with no warranty.\n"
    ),
    # Vector drawings are text whose words are drawing operators and labels.
    "logo/reconnect-logo.eps": (
        "%!PS-Adobe-3.0 EPSF-3.0\n/Helvetica findfont 12 scalefont setfont\n"
        "10 10 moveto (websocket reconnect backoff jitter) show\n"
        "10 30 moveto (websocket reconnect backoff jitter) show\nshowpage\n"
    ),
    "web/icons/reconnect.svg": (
        '<svg xmlns="http://www.w3.org/2000/svg"><title>websocket reconnect</title>\n'
        "<text>websocket reconnect backoff jitter</text></svg>\n"
    ),
}
ROLES = {
    "src/Client/Reconnect.cs": "source",
    "package.json": "config",
    ".github/workflows/build.yml": "config",
    "src/Client.Tests/ReconnectTests.cs": "test",
    "regress/reconnect.sh": "test",
    "benchmarks/reconnect.cs": "test",
    "client.1": "docs",
    "locale/fr/LC_MESSAGES/client.po": "docs",
    "web/locales/de.yml": "docs",
    "COPYING": "docs",
    "logo/reconnect-logo.eps": "docs",
    "web/icons/reconnect.svg": "docs",
    "bun.lock": "config",
    "eng/analyzers/Library.globalconfig": "config",
    "CMakeLists.txt": "config",
    "docs/requirements.txt": "config",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return keyword_indexed(tmp_path_factory.mktemp("priors"), FILES)


def ask(repo, priors: bool) -> list[dict]:
    return bm25_files(repo, WORDS, priors, top=20)


def test_the_implementation_ranks_first_and_each_file_has_its_role(repo):
    results = ask(repo, priors=True)
    assert results[0]["file"] == "src/Client/Reconnect.cs"
    assert {r["file"]: r["explain"]["role"] for r in results} == ROLES
    for r in results:
        assert r["explain"]["prior"] == pytest.approx(ROLE_FACTORS[ROLES[r["file"]]])


def test_without_priors_the_metadata_outranks_the_implementation(repo):
    # The fixture is only a test of the priors if the plain scores put the others first.
    results = ask(repo, priors=False)
    assert results[0]["file"] != "src/Client/Reconnect.cs"
    assert all(r["explain"]["prior"] == 1.0 for r in results)
