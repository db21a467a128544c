"""bench/lock_bench.py runs end to end on a small workspace: real repositories, a real second
process holding the lock, and its table says which shards could not be opened."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_table_counts_the_locked_shards_that_were_not_opened():
    done = subprocess.run(
        [sys.executable, "-m", "bench.lock_bench", "--repos", "3", "--trials", "1",
         "--timeout", "0.2"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = re.findall(r"^\| (\d) \| (\d) \| [\d.]+ \| [\d.]+ \| [\d.]+ \|$", done.stdout, re.M)
    assert rows == [("0", "0"), ("1", "1"), ("2", "2")], done.stdout
