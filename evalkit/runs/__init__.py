"""Runs: attempts of models on a suite's tasks, their records, and resuming."""
