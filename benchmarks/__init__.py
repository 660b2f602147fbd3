"""byok-tui benchmarks: `python -m benchmarks` (see README). Ratios against baselines measured
in the same run, because absolute times on a shared 2-core machine mean little."""
