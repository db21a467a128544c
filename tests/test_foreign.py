"""Someone else's code inside the repository (pix/retrieve/foreign.py), end to end: a real
repository indexed into real SQLite and asked in file mode. A copied library whose folder has
no vendoring name, but its own license text, ranks below the repository's own code; a
package of the repository's own (a manifest beside a license), a folder with the top's own
license again, and a repository with no license at its top keep their files as source."""

from __future__ import annotations

import shutil

import pytest
from conftest import bm25_files, keyword_indexed

from pix.query import QueryEngine
from pix.retrieve import foreign
from pix.store import open_store

WORDS = "format the timestamp padding width"
MIT = "MIT License\n\nCopyright (c) the logging authors\n"
CODE = "// {w}\nint pad_timestamp(int width) {{ return width; /* {w} */ }}\n"

FILES = {
    "LICENSE": MIT,
    "src/pattern.cc": CODE.format(w=WORDS),
    # A copy of another project: its own license, no manifest; it says the words more often.
    "include/log/fmt/bundled/fmt.license.rst": "Copyright (c) the fmt authors\n",
    "include/log/fmt/bundled/format.h": CODE.format(w=f"{WORDS} {WORDS} {WORDS}"),
    # The repository's own package: another license text, but a manifest of its own.
    "packages/cli/LICENSE": "Apache License 2.0\n",
    "packages/cli/package.json": '{"name": "cli"}\n',
    "packages/cli/pad.ts": CODE.format(w=f"{WORDS} {WORDS}").replace("int", "let"),
    # The top's license again below it (fzf's src/LICENSE): the repository's own code.
    "lib/LICENSE": MIT,
    "lib/width.c": CODE.format(w=f"{WORDS} {WORDS}"),
    # Code about licenses is no license text.
    "tools/license.go": "package tools // license checker\n",
    # A manifest deeper in the copy does not make the copy a package of the repository's own.
    "include/log/fmt/bundled/support/package.json": '{"name": "fmt-support"}\n',
    # A folder with a role by its path keeps it: a docs theme with its own license is docs.
    "docs/theme/LICENSE": "BSD License\n",
    "docs/theme/layout.py": CODE.format(w=WORDS).replace("int", "def"),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    return keyword_indexed(tmp_path_factory.mktemp("foreign"), FILES)


def ask(repo, priors: bool = True) -> list[dict]:
    return bm25_files(repo, WORDS, priors, top=10)


def test_only_the_copy_with_a_license_of_its_own_is_foreign(repo):
    with open_store(repo / ".pix.db", create=False) as store:
        (snapshot,) = store.conn.execute("SELECT max(id) FROM snapshot").fetchone()
        assert foreign.folders(store.conn, snapshot) == ("include/log/fmt/bundled",)


def test_the_copy_ranks_below_the_repositorys_own_code(repo):
    results = ask(repo)
    roles = {r["file"]: r["explain"]["role"] for r in results}
    assert roles["include/log/fmt/bundled/format.h"] == "vendored"
    assert roles["docs/theme/layout.py"] == "docs"
    assert roles["packages/cli/pad.ts"] == roles["lib/width.c"] == "source"
    order = [r["file"] for r in results]
    assert order.index("include/log/fmt/bundled/format.h") > order.index("src/pattern.cc")
    # Without priors the copy's plain score puts it first: the fixture tests the rule.
    plain = ask(repo, priors=False)
    assert plain[0]["file"] == "include/log/fmt/bundled/format.h"
    assert all(r["explain"]["role"] != "vendored" or r["explain"]["prior"] == 1.0 for r in plain)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # no license at the top: nothing to compare against
        ([("deps/zlib/LICENSE", "a")], ()),
        # a license differing from every one at the top, dual licenses at the top
        ([("LICENSE-MIT", "a"), ("LICENSE-APACHE", "b"), ("x/COPYING.LIB", "c")], ("x",)),
        ([("LICENSE-MIT", "a"), ("LICENSE-APACHE", "b"), ("x/LICENSE", "b")], ()),
        ([("COPYING", "a"), ("licences/APPDIRS_LICENSE", "d")], ("licences",)),
    ],
)
def test_which_folders_hold_a_license_of_their_own(files, expected):
    licenses = [(p, sha) for p, sha in files if foreign.license_text(p)]
    assert tuple(foreign.foreign_candidates(licenses)) == expected


def test_license_texts_by_name():
    for name in ("LICENSE", "x/LICENSE.txt", "COPYING.LIB", "fmt.license.rst", "UNLICENSE",
                 "licences/APPDIRS_LICENSE", "LICENSE-APACHE-2.0", "COPYING.LESSER", "COPYING3",
                 "boost/LICENSE_1_0.txt", "LICENSE.GPLv3"):  # fmt: skip
        assert foreign.license_text(name), name
    for name in ("tools/license.go", "src/license_check.py", "licenses/index.ts",
                 "src/licenses.json", "script/copyright.txt", "src/components/License.vue",
                 "lib/license.dart", "bin/license-check"):  # fmt: skip
        assert not foreign.license_text(name), name


def test_a_folder_holding_most_of_the_files_is_the_project_itself(tmp_path):
    # `src/LICENSE` differing from the top's by a year: still the project's own code.
    files = {"LICENSE": MIT, "src/LICENSE": MIT.replace("(c)", "(c) 2024"), "README.md": "x\n"}
    files |= {f"src/m{i}.c": CODE.format(w=f"{WORDS} {i}") for i in range(3)}
    root = keyword_indexed(tmp_path, files)
    with open_store(root / ".pix.db", create=False) as store:
        assert foreign.folders(store.conn, 1) == ()
        assert foreign.foreign_candidates([("LICENSE", "a"), ("src/LICENSE", "b")]) == ["src"]


@pytest.mark.parametrize(
    "name", ["package.json", "Cargo.toml", "vcpkg.json", "conanfile.txt", "DESCRIPTION",
             "pubspec.yaml", "x.gemspec", "y.podspec", "build.zig.zon", "deno.json"],
)  # fmt: skip
def test_a_manifest_declares_a_package(name):
    assert foreign._MANIFEST.search(f"packages/a/{name}")


def test_a_reopened_engine_reads_the_folders_of_the_file_now_there(repo, tmp_path):
    # A database replaced under a running engine (the MCP server, a workspace) starts its
    # data_version again: the folders must be read anew, not kept from the old file.
    plain = keyword_indexed(tmp_path, {"LICENSE": MIT, "src/pattern.cc": CODE.format(w=WORDS)})
    db = tmp_path / "copy.db"
    shutil.copy(repo / ".pix.db", db)
    engine = QueryEngine(db=str(db), cwd=str(repo))
    with engine.store.read():
        assert engine.foreign_folders(1) == ("include/log/fmt/bundled",)
    engine.store.close()
    shutil.copy(plain / ".pix.db", db)
    engine.reopen()
    with engine.store.read():
        assert engine.foreign_folders(1) == ()
    engine.close()
