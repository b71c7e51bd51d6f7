"""Benchmarks (``make bench`` / ``python -m bench [section or box module ...]``).

Timings never go into the test suite; see ``bench/README.md``.
"""
