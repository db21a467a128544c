"""What a user installs: the sdist, a wheel built from that sdist, installed into a fresh virtual
environment, and every command run from a git repository outside the checkout.

The module builds once (`python -m build` makes the sdist, then the wheel from the sdist, so a
file missing from the sdist fails here), installs the wheel with its dependencies from the
configured package registries into one new venv, and runs that venv's `pix` and `python -m pix`
with a clean environment (no PYTHONPATH, cwd in a temporary repository), so nothing can be read
from the checkout by accident. The MCP round trip starts the installed `pix mcp` over stdio with
the official SDK client.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import anyio
import jsonschema
import pytest
from conftest import GIT_ENV, new_repo
from mcp import Client, StdioServerParameters

import pix
from pix.schemas import bundled
from pix.shard_probe import BREADTH, STAGE

CHECKOUT = Path(__file__).resolve().parents[1]
# The checkout's data folders and the package each one installs as (pyproject.toml).
DATA_PACKAGES = {"schema": "pix/schema", "migrations": "pix/migrations", "models": "pix/models"}
# Not copied to the build folder: caches, environments, build output and databases.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", "*.egg-info", "build", "dist", ".*cache", ".pix.db*"
)

GEO = '''def circle_area(radius):
    """Area of a circle of the given radius."""
    return 3.14159 * radius * radius
'''
MAIL = '''def send_welcome_email(address):
    """Send the welcome message to a newly registered user."""
    return f"welcome {address}"
'''
NOTES = "# Notes\n\nThe geometry helpers compute areas of shapes.\n"


@dataclass(frozen=True)
class Installed:
    venv: Path
    sdist: Path
    wheel: Path
    repo: Path
    env: dict[str, str]

    def exe(self, name: str) -> str:
        return str(self.venv / ("Scripts" if os.name == "nt" else "bin") / name)

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        """The installed `pix` with `args`, in the temporary repository."""
        return self.run_exe("pix", *args, stdin=stdin)

    def run_exe(self, name: str, *args: str, stdin: str | None = None):
        done = subprocess.run(
            [self.exe(name), *args],
            cwd=self.repo,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert "Traceback" not in done.stderr, done.stderr
        return done

    def json(self, *args: str, stdin: str | None = None) -> dict:
        done = self.run(*args, stdin=stdin)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)


def _run(*cmd: str, cwd: Path | None = None) -> str:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _user_env() -> dict[str, str]:
    """This process's environment without what could point Python or pix at the checkout."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIX_"))}
    env.pop("VIRTUAL_ENV", None)
    return {**env, **GIT_ENV}


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    base = tmp_path_factory.mktemp("wheel")
    source, dist, venv = base / "source", base / "dist", base / "venv"
    shutil.copytree(CHECKOUT, source, ignore=NOT_SOURCE)
    # Neither --sdist nor --wheel: build makes the sdist, then the wheel from the sdist.
    _run(sys.executable, "-m", "build", "--outdir", str(dist), str(source))
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    _run(sys.executable, "-m", "venv", "--without-pip", str(venv))
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    # This environment's pip installs into the new venv (--python): the wheel and every
    # dependency it declares, resolved from the configured registries.
    _run(sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile",
         str(wheel))  # fmt: skip
    repo = new_repo(
        base / "elsewhere" / "repo", {"geo.py": GEO, "mail.py": MAIL, "NOTES.md": NOTES}
    )
    env = _user_env()
    setup = Installed(venv, sdist, wheel, repo, env)
    done = setup.run("index")
    assert done.returncode == 0, done.stderr
    assert "indexed 3 files" in done.stderr
    return setup


def _validator(response: dict, kind: str) -> jsonschema.Draft202012Validator:
    """The checkout's schema for this response, by the version the response declares."""
    return jsonschema.Draft202012Validator(
        bundled(f"{kind}-response.v{response['schemaVersion']}.json")
    )


def _data_files(folder: Path) -> set[str]:
    return {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and (p.suffix != ".py" or p.name == "__init__.py")
    }


def test_sdist_and_wheel_carry_every_data_file(installed):
    with tarfile.open(installed.sdist) as sdist:
        in_sdist = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    with zipfile.ZipFile(installed.wheel) as wheel:
        in_wheel = set(wheel.namelist())
    for folder, package in DATA_PACKAGES.items():
        expected = _data_files(CHECKOUT / folder)
        assert expected, folder
        assert {f"{folder}/{name}" for name in expected} <= in_sdist
        shipped = {n.removeprefix(package + "/") for n in in_wheel if n.startswith(package + "/")}
        # every data file, and no module but the package marker (scripts stay out of the wheel)
        assert shipped == expected, f"{package} in the wheel differs from {folder}/"
    assert "pix/__main__.py" in in_wheel


def test_installed_pix_runs_from_the_venv_not_the_checkout(installed):
    where = installed.run_exe("python", "-c", "import pix.paths as p; print(p.__file__)")
    module = Path(where.stdout.strip()).resolve()
    assert module.is_relative_to(installed.venv.resolve()), module
    expected = f"pix {pix.__version__}"
    done = installed.run("--version")
    assert (done.returncode, done.stdout.strip()) == (0, expected)
    done = installed.run_exe("python", "-m", "pix", "--version")
    assert (done.returncode, done.stdout.strip()) == (0, expected)
    files = installed.run_exe(
        "python", "-c",
        "import importlib.resources as r; print(r.files('pix.models') / 'manifest.json')",
    )  # fmt: skip
    manifest = Path(files.stdout.strip())
    assert manifest.read_bytes() == (CHECKOUT / "models" / "manifest.json").read_bytes()
    assert manifest.resolve().is_relative_to(installed.venv.resolve())


def test_query_chunks_and_files(installed):
    chunks = installed.json("query", "area of a circle", "--json", "--top", "3")
    _validator(chunks, "query").validate(chunks)
    assert chunks["mode"] == "chunk" and "geo.py" in json.dumps(chunks["results"][0])
    files = installed.json("query", "area of a circle", "--file", "--json", "--top", "2")
    _validator(files, "query").validate(files)
    assert files["mode"] == "file" and "def circle_area" in files["results"][0]["text"]
    assert files["results"][0]["file"] == "geo.py"  # seed 000's name for it
    text = installed.run("query", "welcome email", "--file", "--top", "1")
    assert text.returncode == 0 and "def send_welcome_email" in text.stdout


def test_a_change_description_is_weighed_by_history(installed):
    # The installed index counted each file's commits (migration 008, pix/ingest/history.py):
    # the repository's one commit, in the year before it.
    answer = installed.json("query", "Fix the area of a circle", "--file", "--json", "--explain")
    _validator(answer, "query").validate(answer)
    assert answer["explain"]["history"] is True
    assert {r["explain"]["rank"]["commits"] for r in answer["results"]} == {1}
    question = installed.json("query", "how is the area of a circle computed", "--json",
                              "--explain")  # fmt: skip
    assert question["explain"]["history"] is False


def test_a_static_only_index_has_the_transformer_read_the_best_candidates(installed, tmp_path):
    # Before the transformer phase, a question's best candidates are read on the spot
    # (pix/retrieve/refine.py): the installed model files do it, from outside the checkout.
    db = str(tmp_path / "static.pix.db")
    done = installed.run("index", "--static-only", "--db", db, "--quiet")
    assert done.returncode == 0, done.stderr
    answer = installed.json("query", "area of a circle", "--db", db, "--json", "--explain")
    _validator(answer, "query").validate(answer)
    assert "geo.py" in json.dumps(answer["results"][0])
    assert any("dense" in r["explain"]["channels"] for r in answer["results"])
    assert any("on the spot" in w for w in answer["warnings"])


def test_query_input_is_checked_against_the_request_schema(installed):
    request = {"query": "welcome message", "mode": "chunk", "top": 1}
    answer = installed.json("query", "--input", "-", "--json", stdin=json.dumps(request))
    _validator(answer, "query").validate(answer)
    assert "mail.py" in json.dumps(answer["results"][0])
    done = installed.run("query", "--input", "-", stdin=json.dumps({**request, "bogus": 1}))
    assert done.returncode == 2 and "bogus" in done.stderr


def test_pack(installed):
    packet = installed.json("pack", "area of a circle", "--budget", "300", "--json")
    _validator(packet, "pack").validate(packet)
    assert "def circle_area" in packet["text"]
    text = installed.run("pack", "area of a circle", "--budget", "300")
    assert text.returncode == 0 and "def circle_area" in text.stdout


def test_discover(installed):
    answer = installed.json("discover", "-l", "area=circle_area", "-r", "send=send_\\w+", "--json")
    _validator(answer, "discover").validate(answer)
    assert "geo.py" in json.dumps(answer) and "mail.py" in json.dumps(answer)
    request = {"queries": [{"id": "area", "pattern": "circle_area", "mode": "literal"}]}
    again = installed.json("discover", "--input", "-", "--json", stdin=json.dumps(request))
    _validator(again, "discover").validate(again)


def test_status(installed):
    status = installed.json("status", "--json")
    _validator(status, "status").validate(status)
    report = installed.json("index", "--json", "--quiet")
    _validator(report, "index").validate(report)
    assert Path(status["db"]) == (installed.repo / ".pix.db").resolve()
    assert len(status["snapshots"]) == 1 and status["snapshots"][0]["files"] == 3


def test_mcp_round_trip(installed):
    params = StdioServerParameters(
        command=installed.exe("pix"), args=["mcp"], cwd=str(installed.repo), env=installed.env
    )

    async def scenario() -> tuple[set[str], object]:
        async with Client(params, read_timeout_seconds=120) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            result = await client.call_tool(
                "query", {"query": "area of a circle", "mode": "chunk", "top": 2}
            )
            return tools, result

    tools, result = anyio.run(scenario)
    assert {"query", "pack", "discover", "status", "index"} <= tools
    assert not result.is_error, result.content[0].text
    answer = result.structured_content
    _validator(answer, "query").validate(answer)
    assert "geo.py" in json.dumps(answer["results"][0])


def test_workspace_index_and_ray_without_the_cluster_extra(installed, tmp_path):
    # The wheel's own dependencies do not bring Ray: `--ray` needs the extra.
    probe = installed.run_exe(
        "python", "-c", "import importlib.util; print(importlib.util.find_spec('ray'))"
    )
    assert probe.stdout.strip() == "None"
    workspace = tmp_path / "pix.toml"
    workspace.write_text(f'[[repo]]\nname = "repo"\npath = "{installed.repo}"\n', "utf-8")
    done = installed.run("index", "--workspace", str(workspace), "--ray")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "pix: error: --ray needs the cluster extra, which is not installed: "
        "pip install 'pix[cluster]'"
    ]
    plain = installed.json("index", "--workspace", str(workspace), "--json")
    _validator(plain, "index-workspace").validate(plain)
    assert [repo["name"] for repo in plain["repos"]] == ["repo"]
    assert plain["repos"][0]["report"]["embedPending"] == 0 and plain["ray"] is None

    # A question across the workspace from the installed wheel: a second, bare-database entry
    # (a copy of the first's file) answers beside it, and every result names its repository.
    shutil.copyfile(installed.repo / ".pix.db", tmp_path / "copy.pix.db")
    workspace.write_text(
        f'[[repo]]\nname = "repo"\npath = "{installed.repo}"\n\n'
        f'[[repo]]\nname = "copy"\ndb = "{tmp_path / "copy.pix.db"}"\n',
        "utf-8",
    )
    across = installed.json(
        "query", "area of a circle", "--workspace", str(workspace), "--json", "--top", "4"
    )
    _validator(across, "query").validate(across)
    assert {r["repo"] for r in across["results"]} == {"repo", "copy"}
    status = installed.json("status", "--workspace", str(workspace), "--json")
    _validator(status, "workspace-status").validate(status)


TOPICS = [
    "parse the command line flags", "render a progress bar", "hash a password with salt",
    "resize an image", "retry a failed request", "read a csv file", "send a webhook",
    "compress a folder", "schedule a daily job", "format a date", "validate an email address",
    "cache a response", "sort users by age", "convert celsius to fahrenheit", "count words",
]  # fmt: skip


def test_a_large_workspace_ranks_the_shards_its_probe_chooses(installed, tmp_path):
    """Sixteen repositories from the installed wheel: each is probed, at most the BREADTH (6)
    of largest factor are ranked, STAGE at a time while their ceilings can reach the top (the
    others listed with ranked false), and the answer is the geometry one's, with each
    result's shard signals explained (pix/shard_factors.py)."""
    lines = [f'[[repo]]\nname = "geo"\npath = "{installed.repo}"\n']
    for i, topic in enumerate(TOPICS):
        name = f"r{i:02d}"
        words = topic.replace(" ", "_")
        code = f'def {words}():\n    """{topic.capitalize()}."""\n    return "{topic}"\n'
        root = new_repo(tmp_path / name, {f"{words}.py": code})
        lines.append(f'[[repo]]\nname = "{name}"\npath = "{root}"\n')
    workspace = tmp_path / "pix.toml"
    workspace.write_text("\n".join(lines), "utf-8")
    done = installed.run("index", "--workspace", str(workspace), "--static-only")
    assert done.returncode == 0, done.stderr
    across = installed.json(
        "query", "compute the area of a round shape", "--workspace", str(workspace),
        "--json", "--file", "--top", "3", "--explain",
    )  # fmt: skip
    _validator(across, "query").validate(across)
    assert across["results"][0]["repo"] == "geo"
    assert across["explain"]["shardLambda"] > 0
    shown = {r["repo"]: r["explain"]["shard"] for r in across["results"]}
    assert shown["geo"]["factor"] == max(s["factor"] for s in shown.values())
    assert all(s["likelihood"] <= shown["geo"]["likelihood"] for s in shown.values())
    assert across["results"][0]["file"] == "geo.py"
    assert len(across["repos"]) == 16
    assert STAGE <= sum(r["ranked"] for r in across["repos"]) <= BREADTH
    assert {r["repo"] for r in across["results"]} <= {
        r["name"] for r in across["repos"] if r["ranked"]
    }


def test_an_issue_report_from_the_installed_wheel(installed):
    """A whole bug report (a screenshot tag and links among its prose) takes the issue route in
    the installed package and finds the file it is about."""
    report = (
        "circle_area gives a wrong area for a negative radius\n\n"
        "**Describe the bug**\ncircle_area(-2) returns a positive area instead of an error, "
        "see https://github.com/acme/shapes/blob/main/geo.py#L1 and the discussion at "
        "https://forum.example.com/t/areas/42.\n\n"
        '<img width="320" alt="Screenshot" src="https://user-images.example.com/1/shot.png">\n\n'
        "```python\nfrom geo import circle_area\nprint(circle_area(-2))\n```\n"
        "**Expected behavior**\nA ValueError for a negative radius of the circle.\n"
    )
    out = installed.json("query", report, "--json", "--file", "--explain", "--top", "2")
    _validator(out, "query").validate(out)
    assert out["explain"]["shape"] == "issue"
    assert out["results"][0]["file"] == "geo.py"


def test_an_issue_reports_class_member_and_the_first_files_imports(installed, tmp_path):
    """The members evidence and the imported-file step from the installed package: a report
    names `Cart.checkout`, and the module the cart imports is lifted, with an answer that
    keeps to the installed schema."""
    root = new_repo(
        tmp_path / "shop",
        {
            "shop/__init__.py": "",
            "shop/cart.py": "from .pricing import total\n\n\nclass Cart:\n"
            "    def checkout(self, items):\n        return total(items)\n",
            "shop/pricing.py": "def total(items):\n    return sum(i.price for i in items)\n",
            "shop/refunds.py": "def refund(order):\n    return -order.amount\n",
        },
    )
    db = str(tmp_path / "shop.pix.db")
    done = installed.run("index", str(root), "--db", db, "--quiet")
    assert done.returncode == 0, done.stderr
    report = (
        "Checkout charges the wrong amount\n\n**Describe the bug**\nAfter `Cart.checkout` the "
        "amount charged is not the sum of the prices of the items: a few cents more on most "
        "orders, and more on large ones, though the receipt shows the right figure. It happens "
        "with every payment method and in every region we tried.\n\n**Expected behavior**\n"
        "The sum of the prices of the items in the cart.\n"
    )
    args = ("--cwd", str(root), "--db", db, "--json", "--file", "--explain")
    out = installed.json("query", report, *args)
    _validator(out, "query").validate(out)
    assert out["explain"]["shape"] == "issue"
    first = out["results"][0]
    assert first["file"] == "shop/cart.py" and "evidence" in first["explain"]["channels"]
    lifted = {r["file"] for r in out["results"] if "imported" in r["explain"]["rank"]}
    assert lifted == {"shop/pricing.py"}
