"""Gathering tasks from git histories: history walk, environment recipe, prompt, validation."""
