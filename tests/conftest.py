"""Hypothesis profiles for the whole suite.

``fast`` (the default) keeps the example counts the tests ask for and turns off hypothesis's
per-example deadline and its check that making examples is slow: on a shared, loaded machine one
slow example is noise, not a bug, and the suite's time is bounded by the counts instead. ``thorough`` runs ten times the default count in
every property test that does not set its own: ``HYPOTHESIS_PROFILE=thorough pytest``.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("fast", deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", parent=settings.get_profile("fast"), max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))
