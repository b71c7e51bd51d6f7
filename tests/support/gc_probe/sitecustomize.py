"""Loaded at start-up by a child whose PYTHONPATH names this folder
(``tests/e2e/test_serving_gc.py``): each change of the collector's thresholds is said
on stderr, with how many objects were frozen by then, so a test can see a daemon's
own process settle."""

import gc
import sys

_set_threshold = gc.set_threshold


def _said(*thresholds: int) -> None:
    _set_threshold(*thresholds)
    sys.stderr.write(f"gc-probe: young {thresholds[0]} frozen {gc.get_freeze_count()}\n")
    sys.stderr.flush()


gc.set_threshold = _said
