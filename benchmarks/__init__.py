"""Benchmark scripts; ``python -m benchmarks`` runs the kernel suite of ``ppcl.bench``."""
