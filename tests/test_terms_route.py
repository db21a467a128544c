"""Identifier splitting (index and query side) and the query-shape router."""

from __future__ import annotations

import pytest

from pix.ingest.terms import (
    code_terms,
    hyphenated_names,
    identifier_parts,
    path_terms,
    query_terms,
    split_identifier,
)
from pix.retrieve.priors import path_role
from pix.retrieve.route import WEIGHTS, route, shape_of


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("getHTTPResponse2", ["get", "http", "response", "2"]),
        ("snake_case_name", ["snake", "case", "name"]),
        ("XMLHttpRequest", ["xml", "http", "request"]),
        ("__init__", ["init"]),
        ("plain", ["plain"]),
        ("ALL_CAPS", ["all", "caps"]),
    ],
)
def test_split_identifier(name, parts):
    # A tuple: the result is cached, so callers must not be able to mutate it.
    assert split_identifier(name) == tuple(parts)


def test_identifier_parts_are_only_the_unseen_parts():
    text = "def get_user_name(userId): return getUserName(userId) + user"
    # 'user' and 'name'... 'user' is a whole word already, so FTS sees it without help
    assert identifier_parts(text) == "get name id"


def test_query_terms_drop_stopwords_and_split_code_words():
    assert query_terms("Fix the bug in getUserName when it is empty") == [
        "fix",
        "bug",
        "getusername",
        "get",
        "user",
        "name",
        "empty",
    ]


def test_code_terms_only_from_code_shaped_words():
    assert code_terms("allow get_user in the Session request") == ["get_user", "get", "user"]
    assert code_terms("plain words only") == []


def test_path_terms():
    assert path_terms("src/click/_termui_impl.py") == [
        "src",
        "click",
        "_termui_impl",
        "termui",
        "impl",
        "py",
    ]


@pytest.mark.parametrize(
    ("query", "shape"),
    [
        ("src/app.py", "path"),
        ("termui.py", "path"),
        ("core/", "path"),
        ("Session.request", "identifier"),
        ("get_user", "identifier"),
        ("parseJSON", "identifier"),
        ("cookies", "keywords"),
        ("redirect cookies", "keywords"),
        ("why are cookies lost on redirect", "question"),
        ("python merge two dicts", "howto"),
        ("how to flatten a list in Java?", "howto"),
        ("python unique", "howto"),
        ("python", "keywords"),  # a lone language name says nothing of a how-to
        ("Apply workaround for Python <= 3.8", "question"),  # a version: compatibility
        ("Fix Swift 5.7 build errors", "question"),
        ("python: fix instance handling in tests", "question"),  # a component prefix
        ("Console: Fix PHP Doc of InputArgument", "question"),
        ("Corrected help text to 'php app/console' here", "question"),  # a command
        ("fix bash completion of recipes", "question"),  # a shell is a project's subject
        ("concurrent-ruby fix for workers", "question"),
        ("overloaded methods\nWhen using swig to wrap C++ classes for python", "question"),
    ],
)
def test_shapes(query, shape):
    assert shape_of(query) == shape


def test_route_restricts_channels():
    r = route("why are cookies lost on redirect", channels=["dense"])
    assert r.weights == {
        "dense": WEIGHTS["question"]["dense"],
        "static": 0.0,
        "bm25": 0.0,
        "ident": 0.0,
        "path": 0.0,
        "component": 0.0,
        "log": 0.0,
    }


def test_howto_weighs_bm25_below_dense():
    r = route("python merge two dicts")
    assert r.shape == "howto"
    assert r.weights["bm25"] < r.weights["dense"] == WEIGHTS["howto"]["dense"] == 1.0


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("src/requests/sessions.py", "source"),
        ("tests/test_sessions.py", "test"),
        ("pkg/sessions_test.go", "test"),
        ("web/app.spec.ts", "test"),
        ("conftest.py", "test"),
        ("docs/api.rst", "docs"),
        ("CHANGES.rst", "docs"),
        ("HISTORY.md", "docs"),
        ("README.md", "docs"),
        ("COPYING", "docs"),  # license texts, whatever their extension
        ("LICENSE", "docs"),
        ("fzf/src/LICENSE", "docs"),
        ("LICENSE-MIT", "docs"),
        ("COPYING.LIB", "docs"),
        ("NOTICE", "docs"),
        ("src/license.go", "source"),  # code about licenses is code
        ("lib/notice.py", "source"),
        ("copyright_test.go", "test"),
        ("examples/basic.py", "example"),
        ("src/pip/_vendor/rich/console.py", "vendored"),
        ("third_party/lib/tests/test_x.py", "vendored"),
        ("sphinx/themes/basic/static/jquery-3.5.1.js", "vendored"),
        ("astropy/extern/configobj/validate.py", "vendored"),
        # a committed install tree (mobx keeps one under a package's preview/)
        ("packages/plugin/preview/node_modules/plugin/index.js", "vendored"),
        ("web/bower_components/jquery/dist/jquery.js", "vendored"),
        ("app/jspm_packages/npm/lodash@4.17.21/lodash.js", "vendored"),
        ("src/node_module.js", "source"),
        ("src/external_api/client.py", "source"),
        ("static/bootstrap.4.6.2.min.css", "vendored"),
        ("web/assets/vendor-ui-2.0.0-beta.mjs", "vendored"),
        ("docs/_static/jquery-3.5.1.js", "docs"),
        ("src/api.v1.2.js", "source"),
        ("lib/schema-2.0.js", "source"),
        ("src/test/resources/public/library-1.0.0.min.js", "test"),
        ("src/http2.js", "source"),
        ("lib/v8-bridge.js", "source"),
        # other ecosystems' layouts
        ("test/t/test_ssh.py", "test"),  # a Bash project's tests
        ("spec/sidekiq/client_spec.rb", "test"),
        ("src/test/java/io/javalin/TestRouting.java", "test"),
        ("javalin/src/main/java/io/javalin/http/Context.kt", "source"),
        ("javalin-testtools/src/main/java/io/javalin/testtools/HttpClient.kt", "source"),
        ("src/__tests__/router.ts", "test"),
        ("Tests/ArgumentParserUnitTests/NameTests.swift", "test"),
        ("src/Polly.Core.Tests/RetryTests.cs", "test"),
        ("src/Polly/RetryHelper.cs", "source"),
        ("Sources/ArgumentParser/Parsable Properties/NameSpecification.swift", "source"),
        ("tests/gitsigns_spec.lua", "test"),
        ("test/oban/queue_test.exs", "test"),
        ("scalafmt-tests/shared/src/test/scala/FormatTests.scala", "test"),
        ("regress/input-keys.sh", "test"),
        ("benchmarks/routers/src/bench.mts", "test"),
        ("lib/latest.java", "source"),
        ("benchmarks/fzf_test.go", "test"),
        ("tools/e2e/run.sh", "source"),  # measured: e2e/ changed no set
        # build, CI and package metadata
        (".github/workflows/tests.yml", "config"),
        (".github/dependabot.yml", "config"),
        ("setup.cfg", "config"),
        ("Cargo.toml", "config"),
        ("crates/x/Cargo.toml", "config"),
        ("package.json", "config"),
        (".credo.exs", "config"),
        ("mix.exs", "config"),
        ("src/Polly/Polly.csproj", "config"),
        ("ci/requirements/environment.yml", "config"),
        ("CI/GithubActionReporter.php", "source"),  # symfony/console's CI is PHP source
        (".github/ISSUE_TEMPLATE/bug_report.md", "docs"),  # prose, though under .github/
        ("lib/oban/config.ex", "source"),
        ("javalin/src/main/java/io/javalin/config/JavalinConfig.kt", "source"),
        # prose markup by its other names; a Mill build file is Scala build config
        ("readme/Footer.scalatex", "docs"),
        ("README.rdoc", "docs"),
        ("doc/guide.textile", "docs"),
        ("site/pages/intro.mdx", "docs"),
        ("Pods/Acknowledgements.markdown", "docs"),
        ("build.sc", "config"),
        ("build.mill", "config"),
        ("core/package.mill", "config"),
        ("readme/src/main/scala/org/scalafmt/readme/Adopters.scala", "source"),
        ("amm/src/main/scala/ammonite/Main.scala", "source"),
    ],
)
def test_path_roles(path, role):
    assert path_role(path) == role


def test_hyphenated_names_are_whole_identifier_terms():
    assert hyphenated_names("mock Invoke-Mock, then with-open-file") == [
        "invoke-mock",
        "with-open-file",
    ]
    assert hyphenated_names("a -flag, a trailing- dash, x--y") == []
