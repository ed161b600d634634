"""Hypothesis profiles, chosen by the environment variable ``HYPOTHESIS_PROFILE``.

=======  ========================================================================
``ci``   the default (``make test``): each property test runs the number of
         examples its author budgeted for the suite's five minutes on two workers
         (``examples(n)`` is ``n``)
``dev``  a fifth of that, at least one example: a quick loop while editing
``deep`` a hundred times that, no deadline: ``make test-deep`` (the whole suite,
         hours, not for CI); ``make fuzz`` runs only the parsers' fuzz tests, about
         ten minutes
=======  ========================================================================

A test says how many examples it is worth relative to the others with
``@settings(max_examples=examples(40))``; the profile scales it. Tests that name no
count get the profile's own ``max_examples``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["PROFILE", "SCALE", "examples"]

_SCALES = {"ci": 1.0, "dev": 0.2, "deep": 100.0}
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE not in _SCALES:
    raise RuntimeError(f"HYPOTHESIS_PROFILE={PROFILE!r}: choose one of {', '.join(_SCALES)}")
SCALE = _SCALES[PROFILE]

settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile("dev", max_examples=20, deadline=None)
settings.register_profile("deep", max_examples=10_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(PROFILE)


def examples(n: int) -> int:
    """``n`` examples scaled by the profile (``ci``: ``n``; ``dev``: a fifth; ``deep``:
    a hundred times)."""
    return max(1, round(n * SCALE))
