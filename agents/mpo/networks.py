"""MPO networks: a diagonal Gaussian policy and one (or twin) expected-value Q-critics."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from acme import specs
from acme.jax import networks as networks_lib


@dataclasses.dataclass(frozen=True)
class MPONetworks(networks_lib.ActorCriticNetworks):
    """``policy.apply(p, obs) -> (mean, std)``; ``critic.apply(c, obs, action) -> q[num_critics, B]``.

    ``policy.apply(p, obs, True)`` returns ``(mean, std, pre_tanh)``.

    The policy mean is tanh-bounded to (-1, 1); the standard deviation is
    ``softplus + min_std``. Actions are sampled from the unbounded Gaussian and
    clipped to ``[-1, 1]`` when acting and before the critic sees them.
    """

    num_critics: int = 1


def make_networks(
    environment_spec: specs.EnvironmentSpec,
    policy_hidden_sizes: Sequence[int] = (256, 256),
    critic_hidden_sizes: Sequence[int] = (256, 256),
    num_critics: int = 1,
    init_std: float = 0.5,
    min_std: float = 1e-4,
) -> MPONetworks:
    """Networks sized for the environment's observations and (canonical) actions.

    Both torsos are layer-normalised MLPs (``LayerNormMLP``), which keeps the
    first layer well scaled whatever the observation magnitudes.
    """

    def make_policy(action_size: int):
        def policy(observation, return_pre_tanh: bool = False):
            features = networks_lib.observation_features(policy_hidden_sizes, observation, layer_norm=True)
            return networks_lib.GaussianHead(action_size, init_std=init_std, min_std=min_std)(features, return_pre_tanh)

        return policy

    def critic(observation, action):
        return networks_lib.Critic(critic_hidden_sizes, num_critics=num_critics, layer_norm=True)(observation, action)

    return MPONetworks.transform(environment_spec, "MPO", make_policy, critic, num_critics=num_critics)
