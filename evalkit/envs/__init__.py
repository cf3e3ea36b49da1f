"""Environments per (repository, version): SWE-bench's install specs, vendored with their provenance.

Data about tasks only; building images from a spec belongs to the sandbox layer.
"""

from evalkit.envs.swebench_specs import EnvSpec, Provenance, provenance, python_version, spec_for

__all__ = ["EnvSpec", "Provenance", "provenance", "python_version", "spec_for"]
