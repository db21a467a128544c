"""How pix is started: the `pix` console script, `python -m pix`, and `--version`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pix

EXPECTED = f"pix {pix.__version__}"


def run(*cmd: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_version_from_the_console_script_and_python_m_pix(tmp_path):
    script = Path(sys.executable).with_name("pix")  # the environment's console script
    for cmd in ([str(script), "--version"], [sys.executable, "-m", "pix", "--version"]):
        done = run(*cmd, cwd=tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (0, EXPECTED + "\n", ""), cmd
    # an option of the command itself, not of its subcommands
    done = run(sys.executable, "-m", "pix", "status", "--version", cwd=tmp_path)
    assert done.returncode == 2 and "--version" in done.stderr


def test_python_m_pix_is_the_pix_command(tmp_path):
    done = run(sys.executable, "-m", "pix", cwd=tmp_path)
    assert done.returncode == 0 and "Usage: pix" in done.stdout and "--version" in done.stdout
    done = run(sys.executable, "-m", "pix", "status", "--json", cwd=tmp_path)
    assert done.returncode == 3 and '"not_indexed"' in done.stdout
    assert not list(tmp_path.iterdir())  # status never creates a database


def test_a_second_db_is_refused_by_commands_of_one_database(tmp_path):
    # A second --db was silently the one used: `pix index --db a --db b` indexed into b.
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for command in ("index", "gc", "mcp", "alias list"):
        done = run(
            sys.executable, "-m", "pix", *command.split(), "--db", "a.db", "--db", "b.db",
            cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 2, command
        assert done.stderr == (
            "pix: error: this command takes one --db (several databases are asked together "
            "by query, pack, discover and status)\n"
        ), command
    assert not (tmp_path / "a.db").exists() and not (tmp_path / "b.db").exists()


def test_a_deleted_current_folder_is_a_one_line_error(tmp_path):
    # A shell left in a folder deleted behind it: every command said "unexpected
    # FileNotFoundError" with nothing to act on.
    gone = tmp_path / "gone"
    for args in (["status"], ["query", "x"], ["index", "--quiet"], ["query", "x", "--json"]):
        gone.mkdir()
        shell = f'cd "{gone}" && rmdir "{gone}" && exec "$0" -m pix "$@"'
        done = run("sh", "-c", shell, sys.executable, *args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        if "--json" in args:
            assert '"bad_input"' in done.stdout and "no longer exists" in done.stdout
        else:
            assert done.stderr.startswith("pix: error: the current folder no longer exists")
            assert len(done.stderr.splitlines()) <= 2 and "Traceback" not in done.stderr


def test_a_missing_file_is_not_blamed_on_a_deleted_current_folder(tmp_path):
    # Only os.getcwd()'s own error names no file; one that names a file is about that file.
    gone = tmp_path / "gone"
    gone.mkdir()
    code = (
        "from pix.errors import as_pix_error; "
        "print(as_pix_error(FileNotFoundError(2, 'No such file', '/x/model.onnx')).message); "
        "print(as_pix_error(FileNotFoundError(2, 'No such file')).message)"
    )
    shell = f'cd "{gone}" && rmdir "{gone}" && exec "$0" -P -c "$1"'
    done = run("sh", "-c", shell, sys.executable, code, cwd=tmp_path)
    named, unnamed = done.stdout.splitlines()
    assert "model.onnx" in named and "current folder" not in named
    assert unnamed.startswith("the current folder no longer exists")
