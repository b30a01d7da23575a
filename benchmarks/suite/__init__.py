"""The benchmark suite: every registered benchmark, one metric table, runs in and out (pure: no Django)."""
