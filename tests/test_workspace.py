"""Workspace files: pix.toml / .pix-workspace.json -> named shards."""

import json

import pytest

from pix.errors import UsageError
from pix.workspace import from_databases, load_workspace


def test_toml_paths_are_relative_to_the_file(tmp_path):
    (tmp_path / "api").mkdir()
    (tmp_path / "pix.toml").write_text(
        '[[repo]]\npath = "api"\n\n[[repo]]\nname = "docs"\ndb = "store/docs.db"\n'
    )
    ws = load_workspace(tmp_path)
    assert ws.names() == ["api", "docs"]
    api, docs = ws.shards
    assert api.root == (tmp_path / "api").resolve()
    assert api.db == (tmp_path / "api" / ".pix.db").resolve()
    assert docs.root is None and docs.db == (tmp_path / "store" / "docs.db").resolve()
    assert ws.select(["docs"]).names() == ["docs"]
    with pytest.raises(UsageError, match="no repository named web"):
        ws.select(["web"])


def test_json_workspace_and_db_names(tmp_path):
    (tmp_path / ".pix-workspace.json").write_text(
        json.dumps({"repo": [{"db": "a/.pix.db"}, {"db": "b.pix.db"}]})
    )
    assert load_workspace(tmp_path).names() == ["a", "b"]
    assert from_databases([str(tmp_path / "x" / ".pix.db"), "y.db"]).names() == ["x", "y"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("[[repo]]\nname = 'a'\n", "needs a `path` or a `db`"),
        ("[[repo]]\npath = 'a'\n[[repo]]\ndb = 'a/x.db'\nname = 'a'\n", "two repositories"),
        ("[[repo]]\npath = 'a'\ncolour = 1\n", "unknown keys colour"),
        ("[[repo]]\npath = 'a'\nname = 'no spaces'\n", "has the name"),
        ("repo = [\n", "not valid"),
        ("title = 'x'\n", "no \\[\\[repo\\]\\] entries"),
        ("[repo]\npath = 'a'\n", "repo must be a list of entries, not a dict"),
    ],
)
def test_bad_workspaces_are_one_line_usage_errors(tmp_path, text, message):
    (tmp_path / "pix.toml").write_text(text)
    with pytest.raises(UsageError, match=message):
        load_workspace(tmp_path / "pix.toml")


def test_missing_workspace(tmp_path):
    with pytest.raises(UsageError, match="no pix.toml"):
        load_workspace(tmp_path)


def test_a_name_given_twice_is_refused_with_a_hint_that_can_be_followed(tmp_path):
    # --db names each database after its file: "give each a `name`" cannot be done there.
    db = str(tmp_path / "a" / ".pix.db")
    with pytest.raises(UsageError, match="is given twice") as same:
        from_databases([db, db])
    assert same.value.hint == "give it once"
    with pytest.raises(UsageError, match="two repositories are named a") as two:
        from_databases([db, str(tmp_path / "b" / "a" / ".pix.db")])
    assert two.value.hint == "use a workspace file to name each"
    (tmp_path / "pix.toml").write_text("[[repo]]\npath = 'a'\n[[repo]]\ndb = 'b/a/.pix.db'\n")
    with pytest.raises(UsageError, match="two repositories are named a") as listed:
        load_workspace(tmp_path / "pix.toml")
    assert listed.value.hint == "give each a `name`"


def test_one_database_under_two_names_is_refused(tmp_path):
    (tmp_path / "pix.toml").write_text(
        "[[repo]]\nname = 'one'\npath = 'a'\n[[repo]]\nname = 'two'\ndb = 'a/.pix.db'\n"
    )
    with pytest.raises(UsageError, match="one and two are one database") as twice:
        load_workspace(tmp_path / "pix.toml")
    assert twice.value.hint == "list it once"


def test_db_names_are_made_valid_from_any_folder_name(tmp_path):
    # --db cannot give a name: a folder with a space or a leading dot still makes one.
    ws = from_databases([str(tmp_path / "my repo" / ".pix.db"), str(tmp_path / ".hidden.db")])
    assert ws.names() == ["my-repo", "hidden"]
    (tmp_path / "pix.toml").write_text("[[repo]]\npath = 'a'\nname = '.x'\n")
    with pytest.raises(UsageError, match="has the name '.x'") as bad:
        load_workspace(tmp_path / "pix.toml")
    assert "starts with a letter or digit" in bad.value.hint


def test_a_workspace_file_nested_too_deeply_is_a_usage_error(tmp_path):
    (tmp_path / ".pix-workspace.json").write_text("[" * 100_000)
    with pytest.raises(UsageError, match="nests arrays or objects too deeply"):
        load_workspace(tmp_path)
