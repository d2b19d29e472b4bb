"""Agents: one package per algorithm, each exposing a builder."""

import acme  # noqa: F401 - first, so that acme's import hook is in place before an agent imports distrax or rlax
