"""Benchmarks for pix: each module is one command (`python -m bench.<module>`); see README.md."""
