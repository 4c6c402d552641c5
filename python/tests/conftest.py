"""pytest setup for the spatialhash Python tests: a Hypothesis profile that writes no example
database into the working tree and has no per-example deadline (timings are not tested)."""

from hypothesis import HealthCheck, settings

settings.register_profile(
    "spatialhash",
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("spatialhash")
