"""TD3+BC acts as TD3 does (its builder), with its own config and learner."""

from __future__ import annotations

from agents.td3.builder import TD3Builder
from agents.td3_bc.config import TD3BCConfig
from agents.td3_bc.learning import TD3_BC_LEARNER


class TD3BCBuilder(TD3Builder):
    config_class = TD3BCConfig
    learner = TD3_BC_LEARNER
