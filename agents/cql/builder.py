"""CQL acts as SAC does (its builder), with its own config and learner."""

from __future__ import annotations

from agents.cql.config import CQLConfig
from agents.cql.learning import CQL_LEARNER
from agents.sac.builder import SACBuilder


class CQLBuilder(SACBuilder):
    config_class = CQLConfig
    learner = CQL_LEARNER
