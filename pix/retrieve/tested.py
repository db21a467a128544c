"""The tested-file step: a test file lends its score to the file it tests.

Tests are never what "where is X" asks for, so the path prior multiplies them down
(pix/retrieve/priors.py); yet a test that matches the question well says where the code
under test lives. `tests/test_ext_autodoc_typehints.py` tests `sphinx/ext/autodoc/
typehints.py`, `src/terminal_test.go` tests `src/terminal.go`, `spec/sidekiq/client_spec.rb`
tests `lib/sidekiq/client.rb`, `Polly.Core.Tests/Retry/RetryStrategyTests.cs` tests
`Polly.Core/Retry/RetryStrategy.cs`. Among the first TESTED_TOP files, each test file's
subject (by name, below) gains WEIGHT x the test's score; a source file that several tests
name gains the largest.

A test's subject is the source file, in the test's language, among those first files whose
path ends in the test's name: the test's file name without its test marks (`test_`, `_test`,
`.spec`, `Tests`), split into words (snake_case, camelCase, dots), with the folders before
it that are not test or source roots. The subject's own file name must match whole (a
generic one, `__init__`, `mod`, `index`, with its folder); the longest match wins, a test
that names more than MAX_SUBJECTS files equally well lends to none, a Go test lends only in
its own folder, and test data (fixtures, testdata) lends nothing.

Measured (bench/README.md, "twenty-seventh session"), WEIGHT 1.0 over the first 50 files,
nDCG@10 / MRR@10: the 14 language sets' commit subjects, static-only, 0.678 / 0.670 ->
0.685 / 0.677 (polly +0.026 / +0.023, sidekiq, oban, hono, symfony-console up; scalafmt
-0.002 the largest loss); the 480 developers' questions 0.789 / 0.821 -> 0.793 / 0.825 (fzf
+0.045 MRR@10; gitsigns -0.031, just -0.017); issueloc's 116 reports with the transformer
Acc@1 / Acc@5 / MRR@10 0.483 / 0.767 / 0.740 -> 0.517 / 0.784 / 0.767, static-only 0.500 /
0.741 / 0.730 -> 0.517 / 0.750 / 0.745. It costs click 0.904 / 0.883 -> 0.891 / 0.867 and
requests 0.888 / 0.868 -> 0.886 / 0.863: click's central module (core.py) is tested by
tests named for features (test_options.py, test_commands.py), while its small modules have
tests of their own name (test_termui.py), so only those gain. Lending from docs as well
changed nothing; the first test alone halved click's loss and cost sidekiq's questions
0.033 and the reports' Acc@5 gain; a test's score above the median test's kept click and
gave up most of the gains elsewhere.
"""

from __future__ import annotations

import re

from pix.ingest.terms import split_identifier
from pix.retrieve import lift
from pix.retrieve.hits import Hit, revised
from pix.retrieve.priors import ROLE_FACTORS

TESTED_TOP = 50
WEIGHT = 1.0
MAX_SUBJECTS = 2
# Folders that say where a test or source tree starts, not what a test is about.
_ROOTS = frozenset(
    {"test", "tests", "testing", "spec", "specs", "__tests__", "src", "lib", "main", "java"}
    | {"kotlin", "scala", "unit", "integration", "t"}
)
_MARKS = frozenset({"test", "tests", "spec", "specs"})
# File names that say nothing of their own (a package's `__init__`, Rust's `mod`, JS's
# `index`, a suite's helper): such a test names a subject only with its folder, so
# `tests/parser/__init__.py` does not test `src/lexer/__init__.py`.
GENERIC_NAMES = frozenset(
    {"init", "mod", "index", "main", "lib", "helper", "helpers", "setup", "utils", "util"}
    | {"common", "conftest", "support", "base"}
)
# Test data, not tests of code: a fixture named config.json tests no config.py.
_DATA = re.compile(r"(^|/)(fixtures?|testdata|test_?data|__snapshots__|snapshots)/", re.I)
# What separates the words of a file or folder name besides case and `_` (split_identifier's).
_NAME_SEPARATORS = re.compile(r"[^A-Za-z0-9_]+")


def enabled(priors: bool) -> bool:
    """With the path priors only: the step gives back what the test prior took from a
    test's evidence; with `--no-priors` a test keeps its whole score."""
    return priors


def lend_weight(priors: bool) -> float:
    """WEIGHT where the step runs (with the path priors), else 0."""
    return WEIGHT if enabled(priors) else 0.0


def most_share(priors: bool) -> float:
    """The most the step adds to a file from a test's own chunks, as a share of the most a
    file scores without the outline and tested steps (a workspace skips a repository by its
    ceiling, pix/shard_probe.py): WEIGHT x the test prior x that most. The test's outline
    bonus, which it lends too, is pix.retrieve.outline.most_share's (`lent`)."""
    return lend_weight(priors) * ROLE_FACTORS["test"]


def words(name: str) -> list[str]:
    """`RetryResilienceStrategy` -> retry resilience strategy; `test_ext_autodoc` -> test ext
    autodoc; `Polly.Core.Tests` -> polly core tests (the identifier channel's split)."""
    return [w for piece in _NAME_SEPARATORS.split(name) for w in split_identifier(piece)]


def file_stem(path: str) -> str:
    """A file's name without its extension (`a/b.test.ts` -> b.test; `.eslintrc` stays)."""
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name


def _folder(path: str) -> str:
    return path.rpartition("/")[0]


def _source_words(path: str) -> tuple[list[str], list[str]]:
    """A source file's path words and its file name's words."""
    stem = words(file_stem(path))
    return [w for folder in path.split("/")[:-1] for w in words(folder)] + stem, stem


def test_words(path: str) -> list[str]:
    """What a test file is about: its folders that are not roots, then its name without its
    test marks (`Polly.Core.Tests/Retry/RetryStrategyTests.cs` -> polly core tests retry
    retry strategy). Empty when the name is only marks (`tests/test.py`)."""
    name = words(file_stem(path))
    while name and name[0] in _MARKS:
        name = name[1:]
    while name and name[-1] in _MARKS:
        name = name[:-1]
    if not name:
        return []
    folders = [w for f in path.split("/")[:-1] if f.lower() not in _ROOTS for w in words(f)]
    return folders + name


def _common_tail(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def subjects(test_path: str, sources: dict[str, tuple[list[str], list[str]]]) -> list[str]:
    """The files of `sources` (path -> _source_words) that `test_path` tests: those whose path
    words end in the test's words, the source's whole file name included (a generic name
    with a folder of it too), the longest such ending winning; none when more than
    MAX_SUBJECTS tie. A Go test tests its own folder's package; test data tests nothing."""
    about = test_words(test_path)
    if not about or _DATA.search(test_path):
        return []
    same_folder = test_path.endswith("_test.go")
    best, found = 0, []
    for path, (path_words, stem) in sources.items():
        if not stem or (same_folder and _folder(path) != _folder(test_path)):
            continue
        tail = _common_tail(path_words, about)
        if tail < len(stem) + (stem[-1] in GENERIC_NAMES):
            continue
        if tail > best:
            best, found = tail, [path]
        elif tail == best:
            found.append(path)
    return found if len(found) <= MAX_SUBJECTS else []


def lend(files: list[Hit]) -> list[Hit]:
    """`files` (ranked) with each test's score lent to its subject among the first
    TESTED_TOP files, in the test's language, ranked again (rank: `tested`, the bonus, and
    `testedBy`, the test that lent it)."""
    top = files[:TESTED_TOP]
    # A test the definition or phrase step lifted holds what was asked for itself (it defines
    # the name, it holds the pasted line): its lift is about it, not the file it tests.
    tests = [f for f in top if f.role == "test" and not lift.lifted(f)]
    if WEIGHT <= 0 or not tests:
        return files
    by_language: dict[str, dict[str, tuple[list[str], list[str]]]] = {}
    for f in top:
        if f.role == "source":
            by_language.setdefault(f.language, {})[f.path] = _source_words(f.path)
    # subject -> (bonus, the test that lends it); `tests` is in rank order, so of two tests
    # that lend the same the higher ranked one is named.
    bonus: dict[str, tuple[float, str]] = {}
    for test in tests:
        for path in subjects(test.path, by_language.get(test.language, {})):
            if WEIGHT * test.score > bonus.get(path, (0.0, ""))[0]:
                bonus[path] = (WEIGHT * test.score, test.path)
    if not bonus:
        return files
    out = [
        revised(
            f,
            score=f.score + bonus[f.path][0],
            rank={**f.rank, "tested": bonus[f.path][0], "testedBy": bonus[f.path][1]},
        )
        if f.path in bonus
        else f
        for f in files
    ]
    return sorted(out, key=lambda h: (-h.score, h.path))
