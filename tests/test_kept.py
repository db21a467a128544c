"""pix/retrieve/kept.py: what the evidence steps remember of the files they read, bounded, the
least recently used out first, and whole under threads."""

from __future__ import annotations

import threading

from pix.retrieve.kept import Kept


def test_the_least_recently_used_goes_first():
    kept: Kept[int] = Kept(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # now a is the newer
    kept.put("c", 3)
    assert kept.get("b") is None and kept.get("a") == 1 and kept.get("c") == 3
    kept.put("a", 4)  # put again: replaced, and the newest
    kept.put("d", 5)
    assert kept.get("c") is None and kept.get("a") == 4 and len(kept) == 2


def test_threads_keep_it_whole():
    kept: Kept[int] = Kept(50)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for i in range(2000):
                kept.put((offset, i % 80), i)
                kept.get((offset, (i * 7) % 80))
        except BaseException as exc:  # an OrderedDict changed under a move_to_end, say
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(kept) == 50
