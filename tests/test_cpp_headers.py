"""A '.h' header is C unless it shows C++ (pix.ingest.languages), an Objective-C header keeps
the C reading and its retry, and an older database's C++ headers are cut again as C++ with
their language recorded (chunker 6). Real grammars, a real git repository, real SQLite."""

from __future__ import annotations

import re

import pytest
from conftest import new_repo

from pix.index import index_repository
from pix.ingest import languages
from pix.ingest.chunk import chunk_file
from pix.store import open_store
from pix.store.content import CHUNKER_VERSION_KEY


@pytest.mark.parametrize(
    ("path", "head", "language"),
    [
        ("src/tmux.h", "struct window { int id; };\ntypedef struct window window_t;\n", "c"),
        ("include/uv.h", '#ifdef __cplusplus\nextern "C" {\n#endif\nint uv_run(void);\n', "c"),
        ("src/a.h", "/* unlike std::string, a C string */\nint f(void);\n", "c"),
        ("src/a.h", " * private: kept for std::vector users\n", "c"),  # comment lines
        ("include/fmt/base.h", "#include <stdio.h>\nnamespace fmt {\n}\n", "cpp"),
        ("db/table.h", "class Table {\n public:\n  int Get();\n};\n", "cpp"),
        ("spdlog/logger.h", "class SPDLOG_API logger\n{\n", "cpp"),
        ("absl/x.h", "template <typename T>\nT id(T v) { return v; }\n", "cpp"),
        ("util/arena.h", "#include <vector>\nint f(void);\n", "cpp"),
        ("util/x.h", "inline int top(int a) { return std::max(a, 0); }\n", "cpp"),
        ("a.h", "// -*- C++ -*-\nint f(void);\n", "cpp"),
        ("Foo.h", "#import <Foundation/Foundation.h>\n#include <vector>\n@interface Foo\n", "c"),
        ("src/a.c", "namespace x {\n", "c"),  # only a header is read for it
        ("src/a.hpp", "int f(void);\n", "cpp"),
    ],
)
def test_a_header_is_cpp_when_it_shows_cpp(path, head, language):
    assert languages.language_for(path, head) == language


# Both grammars stumble on the macro, so the C reading's retry with C++ (which wants a clean
# parse) keeps C, which reads neither the class nor its template method.
CPP_HEADER = """#pragma once
#include <string>

namespace store {

// Holds the rows of one table.
class Table : public Source {
 public:
  explicit Table(std::string name);

  int Get(const std::string& key) const;

  template <typename Fn>
  void ForEach(Fn fn) const {
    for (const auto& row : rows_) {
      fn(row);
    }
  }

 private:
  STORE_DISALLOW_COPY(Table)
  std::string name_;
};

}  // namespace store
"""
OBJC_HEADER = """#import <Foundation/Foundation.h>
#include <vector>

@interface Shelf : NSObject
- (void)addBook:(NSString *)title;
@end
"""


def defined(text: str, path: str) -> set[str]:
    return {name for c in chunk_file(text, path, min_chars=0) for name in c.defines}


def test_a_cpp_header_is_cut_by_the_cpp_grammar():
    assert {"Table", "ForEach"} <= defined(CPP_HEADER, "db/table.h")


def test_an_objective_c_header_keeps_the_objective_c_grammar():
    # It includes a C++ header, but the C++ grammar would read its interface as blocks.
    assert {"Shelf", "addBook"} <= defined(OBJC_HEADER, "Shelf.h")


BLOB_LANGUAGE = """
SELECT b.language FROM blob b JOIN snapshot_file f ON f.blob_sha = b.sha WHERE f.path = ?
"""
DEFINED = "SELECT count(*) FROM symbol WHERE term = ? AND whole = 1 AND declared = 0"


def test_an_older_databases_cpp_header_is_cut_again_as_cpp(tmp_path, embedder, monkeypatch):
    repo = new_repo(tmp_path / "repo", {"db/table.h": CPP_HEADER, "src/app.py": "X = 1\n"})
    db = repo / ".pix.db"
    with monkeypatch.context() as m:  # chunker 5: every '.h' is C
        m.setattr(languages, "_CPP_HEADER", re.compile(r"(?!)"))
        index_repository(str(repo), embedder=embedder)
    with open_store(str(db), create=False) as store, store.write():
        store.set_meta(CHUNKER_VERSION_KEY, "5")
        assert store.conn.execute(BLOB_LANGUAGE, ("db/table.h",)).fetchone() == ("c",)
        assert store.conn.execute(DEFINED, ("foreach",)).fetchone() == (0,)

    index_repository(str(repo), embedder=embedder)

    with open_store(str(db), create=False) as store:
        assert store.conn.execute(BLOB_LANGUAGE, ("db/table.h",)).fetchone() == ("cpp",)
        assert store.conn.execute(BLOB_LANGUAGE, ("src/app.py",)).fetchone() == ("python",)
        assert store.conn.execute(DEFINED, ("foreach",)).fetchone() == (1,)
