"""Identifier splitting (index and query side) and the query-shape router."""

from __future__ import annotations

import pytest

from pix.ingest.terms import (
    code_terms,
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
    assert split_identifier(name) == parts


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
    }


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
        ("examples/basic.py", "example"),
        ("src/pip/_vendor/rich/console.py", "vendored"),
        ("third_party/lib/tests/test_x.py", "vendored"),
    ],
)
def test_path_roles(path, role):
    assert path_role(path) == role
