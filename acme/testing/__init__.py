"""Test helpers: deterministic fake environments and specs."""

from acme.testing.fakes import FakeEnvironment, continuous_spec, discrete_spec

__all__ = ["FakeEnvironment", "continuous_spec", "discrete_spec"]
