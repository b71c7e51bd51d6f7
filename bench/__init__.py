"""Benchmarks (``make bench`` / ``python -m bench [name ...]``); timings never go into tests."""
