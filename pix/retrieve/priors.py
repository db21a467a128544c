"""Path priors: what kind of file a path is, and how much a hit in it counts.

A developer asking "where is X" wants the implementation first; tests, docs, changelogs,
examples, vendored copies and build/CI/package metadata mention X too, often word for word
(a dependency's name, a test's description, an issue template). Their hits are kept but
multiplied down. `--no-priors` turns this off (every factor 1.0).

Beyond `test/`, `tests/`, `spec/`, `__tests__/`, `_test.go` and `*.test.ts`, tests are also
`regress/` (tmux and other BSD-style C projects), benchmark folders (`bench/`, `benches/`,
`benchmarks/`) and folders named for what they test (`Polly.Core.Tests/`, `scalafmt-tests/`,
`foo_specs/`). Docs include man pages outside `man/` (`tmux.1`, which names every option
and command: tmux static-only nDCG@10 / MRR@10 0.410 / 0.398 -> 0.434 / 0.430; no other set
has one outside `man/` or a test fixture folder) and translation catalogs (`*.po`, `*.pot`,
`LC_MESSAGES/`, data files under `locale(s)/`, `i18n/`, `l10n/`, `translations/`: every message
again, in every language; sphinx's catalogs were in the top 5 of a third of issueloc's sphinx
reports), license texts (`COPYING`, `LICENSE`, `NOTICE` without an extension were source:
the GPL's prose was among the first four files for 8 of bash-completion's 100 commit subjects)
and vector drawings (`*.svg`, `*.eps`, `*.ps`: tmux's PostScript logo led a copy-mode subject).
The config role is build, CI and package metadata (`.github/`, `setup.cfg`, `Cargo.toml`,
`package.json`, `mix.exs`, `*.csproj`, `Makefile`, .NET analyzer `*.globalconfig`, whose rule
descriptions match vague subjects: polly 0.532 / 0.526 -> 0.545 / 0.546; any `*.lock`: hono
0.713 / 0.698 -> 0.720 / 0.705).
Each rule and factor was checked on every development set with bench/priors_bench.py and kept
only where it helped across them; rules that changed no set (`*_spec.lua`, `FooTests.cs` file
names, `e2e/`, `3rdparty/`, `playground/`) were left out. `node_modules/` (and bower's and
jspm's install folders) changed no set either until a committed install tree turned up:
mobx's `preview/node_modules/eslint-plugin-mobx/index.js` led one of questions-more's mobx
questions with the transformer (mobx's questions 0.837 / 0.872 -> 0.849 / 0.889; no other
development repository holds such a folder).
"""

from __future__ import annotations

import re
from functools import lru_cache

# Build files that are text files by name: `.txt` alone would make them docs.
_BUILD_TEXT = re.compile(r"(^|/)(cmakelists|requirements[^/]*)\.txt$", re.I)

ROLE_FACTORS: dict[str, float] = {
    "source": 1.0,
    "test": 0.3,
    "docs": 0.3,
    "example": 0.7,
    "vendored": 0.5,
    "config": 0.5,
}

_TEST = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|specs|test_?data|fixtures?|regress"
    r"|bench|benches|benchmarks?)/"
    r"|(^|/)[^/]*[-_.](tests?|specs?|benchmarks?|unittests|integrationtests)/"
    r"|(^|/)(test_[^/]*|[^/]*_test\.\w+|[^/]*\.(test|spec)\.\w+|conftest\.py)$",
    re.I,
)
_DOCS = re.compile(
    r"(^|/)(docs?|documentation|man)/"
    r"|(^|/)(changes|changelog|history|news|release[-_]?notes|authors|contributing|readme)"
    r"([.\-_][^/]*)?$"
    # Prose markup: Markdown's and AsciiDoc's other names, MDX, RDoc, Textile, Scalatex (the
    # docs of Ammonite's readme/, first for 39 of its 100 subjects asked at their parents).
    r"|\.(md|rst|txt|adoc|asciidoc|markdown|mdx|rdoc|textile|scalatex)$"
    r"|(^|/)[a-z][a-z_-]*\.[1-9][a-z]?$|\.(pod|texi|texinfo)$"  # man pages, perldoc, texinfo
    # Translation catalogs: every user-facing message again, in every language.
    r"|\.pot?$|(^|/)LC_MESSAGES/"
    r"|(^|/)(locales?|i18n|l10n|translations)/(.*/)?[^/]*\.(json|ya?ml|properties|xlf|xliff"
    r"|strings|resx|arb)$"
    # License texts, named without an extension or with a prose or license one (`COPYING`,
    # `LICENSE-MIT`, `COPYING.LIB`); never code about licenses (`license.go`, `notice.py`).
    r"|(^|/)(licen[cs]es?|copying|unlicense|notice|copyright)"
    r"([-_.](txt|md|rst|markdown|mit|apache(-?2(\.0)?)?|bsd|gpl|lgpl|lib|third[-_]?party))*$"
    # Vector drawings (logos, diagrams): text files whose words are drawing operators and
    # markup (PostScript's `moveto`, `show`, `fill`), not code. tmux's logo/*.eps took the
    # first three places for a commit subject about copy mode.
    r"|\.(svg|eps|ps)$",
    re.I,
)
_EXAMPLE = re.compile(r"(^|/)(examples?|samples?|demos?)/", re.I)
# `extern/`: astropy's copies of configobj, ply and jquery (issueloc astropy MRR@10 0.698 ->
# 0.739 static-only); no language set has the folder.
VENDORED = re.compile(
    r"(^|/)(vendor|vendored|_vendor|third_party|thirdparty|external|extern"
    r"|node_modules|bower_components|jspm_packages)/",
    re.I,
)
# A web library copied into an asset folder under its release's name (`static/jquery-3.5.1.js`,
# `assets/bootstrap.4.6.2.min.css`; first-party `src/api.v1.2.js` is not one): thousands of
# lines of someone else's code that match any question. Sphinx's themes carry such copies: one
# was in the top 5 for 25 of issueloc's 41 sphinx reports (2 as vendored; MRR@10 0.447 ->
# 0.484, static-only). No language set holds such a file outside its tests; under docs/ one
# stays docs (x0.3).
_VERSIONED_ASSET = re.compile(
    r"(^|/)(static|_static|assets?|public|js|css|www|dist)/(.*/)?"
    r"[A-Za-z][\w.-]*?[-.]v?\d+(\.\d+)+([-.]\w+)?(\.min)?\.(js|mjs|css)$",
    re.I,
)
_CONFIG = re.compile(
    r"(^|/)\.(github|gitlab|circleci|buildkite|devcontainer|binder|husky|vscode|idea|cargo)/"
    r"|(?-i:(^|/)ci/)"  # lowercase: symfony/console's CI/ folder is PHP source
    r"|(^|/)(setup\.cfg|tox\.ini|pytest\.ini|\.coveragerc|pyproject\.toml|manifest\.in"
    r"|requirements[^/]*\.(txt|in)|environment[^/]*\.ya?ml|noxfile\.py|pipfile(\.lock)?"
    r"|poetry\.lock|\.pre-commit-config\.yaml|\.readthedocs\.ya?ml|codecov\.ya?ml"
    r"|\.travis\.yml|appveyor\.yml|azure-pipelines\.yml|\.gitlab-ci\.yml|jenkinsfile"
    r"|dependabot\.yml|renovate\.json5?|\.editorconfig|\.git(ignore|attributes|modules)"
    r"|\.(docker|npm|eslint|prettier)ignore|dockerfile[^/]*|docker-compose[^/]*\.ya?ml"
    r"|makefile(\.am|\.in)?|cmakelists\.txt|configure\.ac|meson\.build|cargo\.(toml|lock)"
    r"|go\.(mod|sum)|package(-lock)?\.json|yarn\.lock|pnpm-(lock|workspace)\.yaml|deno\.jsonc?"
    r"|[jt]sconfig[^/]*\.json|\.(eslintrc|prettierrc|babelrc|swcrc)[^/]*"
    r"|[^/]*\.config\.(js|cjs|mjs|ts|mts)|gemfile(\.lock)?|[^/]*\.gemspec|\.rubocop[^/]*\.yml"
    r"|composer\.(json|lock)|phpunit\.xml(\.dist)?|phpstan[^/]*\.neon(\.dist)?|psalm\.xml"
    r"|\.php-cs-fixer[^/]*|mix\.(exs|lock)|\.credo\.exs|\.formatter\.exs"
    r"|(build|settings)\.gradle(\.kts)?|gradle\.properties|gradlew(\.bat)?|pom\.xml"
    # Scala builds: sbt's, and Mill's (build.sc, build.mill, a folder's package.mill), at any
    # depth as a Gradle or sbt build of a subproject is
    r"|build\.(sbt|sc|mill)|package\.mill|\.scalafmt\.conf|\.jvmopts"
    r"|[^/]*\.(csproj|fsproj|sln|props|targets)|global\.json"
    r"|[^/]*\.(globalconfig|ruleset)"  # .NET analyzer settings: every rule's prose
    r"|[^/]*\.lockb?"  # every ecosystem's lock file (bun.lock, deno.lock, flake.lock...)
    r"|nuget\.config|package\.(swift|resolved)|\.swiftlint\.yml|stack\.yaml|cabal\.project[^/]*"
    r"|[^/]*\.cabal|hie\.yaml|\.luarc\.json|\.?stylua\.toml|selene\.toml|\.busted"
    r"|[^/]*\.rockspec|flake\.(nix|lock)|justfile|\.clang-(format|tidy)|\.shellcheckrc"
    r"|codeowners|\.mailmap|netlify\.toml|vercel\.json|wrangler\.toml)$",
    re.I,
)


# The fused statement asks for the role of every candidate's path (1,600 a query on a
# 10,000-chunk repository: 20 ms of regular expressions), and paths repeat across queries.
@lru_cache(maxsize=1 << 16)
def path_role(path: str) -> str:
    """One of ROLE_FACTORS' keys. Vendored wins over the others (a vendored test is vendored),
    config over test (`.github/workflows/tests.yml` is CI), docs over config (`.github/`'s
    issue templates and contributing guides are prose) but for build files named `.txt`
    (`CMakeLists.txt`, `requirements.txt`); a versioned web library in a test,
    example or docs folder keeps that role."""
    if VENDORED.search(path):
        return "vendored"
    if _CONFIG.search(path) and (not _DOCS.search(path) or _BUILD_TEXT.search(path)):
        return "config"
    if _TEST.search(path):
        return "test"
    if _EXAMPLE.search(path):
        return "example"
    if _DOCS.search(path):
        return "docs"
    if _VERSIONED_ASSET.search(path):
        return "vendored"
    return "source"
