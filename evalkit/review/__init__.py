"""The agentic reviewer: a model behind any OpenAI-compatible endpoint grades a change as a
maintainer would, reading the base, candidate and reference trees of a read-only sandbox through
tools, and answers a rubric through a structured tool call (`verdict.ReviewVerdict`)."""
