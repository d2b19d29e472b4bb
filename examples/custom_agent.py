"""A new agent from the library's pieces, in one file: DDPG, its own loss on the shared learner.

The replay table, n-step adder, dataset and actor are the stock ones
(``ActorCriticBuilder``), the learner is ``SGDLearner`` (fused updates, NaN
checks, checkpoints), and the training state, optimiser step and Polyak
targets are shared helpers (``acme.jax.actor_critic``,
``acme.jax.optimization``). What is left is the agent itself: a critic loss,
a policy loss and how to act. It reuses TD3's config and networks (DDPG is TD3
without clipped double Q, target smoothing and delayed updates).

    python examples/custom_agent.py [--max-steps 20000]
"""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import optax

from acme.agents.transition_builder import ActorCriticBuilder
from acme.environments import make_environment
from acme.experiments import ExperimentConfig, run
from acme.jax.actor_critic import actor_critic_learner, init_actor_critic_state, next_step
from acme.jax.optimization import gradient_step
from acme.jax.running_statistics import ObservationNormalizer
from agents import td3


def make_update(networks: td3.TD3Networks, config: td3.TD3Config):
    """One critic step towards ``r + discount * Q'(s', pi'(s'))``, one policy step up ``Q(s, pi(s))``."""
    optimizer = optax.adam(config.learning_rate)
    normalizer = ObservationNormalizer(config.normalize_observations)

    def critic_loss_fn(critic_params, state, t):
        next_q = networks.critic.apply(
            state.target_critic_params,
            t.next_observation,
            networks.policy.apply(state.target_policy_params, t.next_observation),
        )[0]
        target = jax.lax.stop_gradient(t.reward + t.discount * next_q)  # the adder's discount holds gamma^n
        q = networks.critic.apply(critic_params, t.observation, t.action)[0]
        return jnp.mean(jnp.square(q - target)), jnp.mean(q)

    def policy_loss_fn(policy_params, critic_params, t):
        action = networks.policy.apply(policy_params, t.observation)
        return -jnp.mean(networks.critic.apply(critic_params, t.observation, action)[0])

    def update(state, transitions):
        stats, t = normalizer.normalize_transitions(state.observation_stats, transitions)
        critic = gradient_step(critic_loss_fn, optimizer, state.critic_params, state.critic_opt_state, state, t)
        policy = gradient_step(
            policy_loss_fn, optimizer, state.policy_params, state.policy_opt_state, critic.params, t, has_aux=False
        )
        critic_loss, mean_q = critic.value
        # The stepped policy and critic, Polyak-moved targets; next_step adds the step count, statistics and key.
        new_state = next_step(
            state,
            stats,
            state.random_key,
            policy=policy,
            critic=critic,
            target_policy_params=optax.incremental_update(policy.params, state.target_policy_params, config.tau),
            target_critic_params=optax.incremental_update(critic.params, state.target_critic_params, config.tau),
        )
        return new_state, {"critic_loss": critic_loss, "policy_loss": policy.value, "mean_q": mean_q}

    return update


def make_initial_state(networks: td3.TD3Networks, config: td3.TD3Config, key: jax.Array):
    return init_actor_critic_state(networks, optax.adam(config.learning_rate), key)


DDPG_LEARNER = actor_critic_learner("DDPG", make_update, make_initial_state)


class DDPGBuilder(ActorCriticBuilder):
    """Explores with Gaussian noise on the deterministic action; acts without it in evaluation."""

    config_class = td3.TD3Config
    learner = DDPG_LEARNER

    def select_actions(self, networks, policy_params, key, observations, evaluation):
        actions = networks.policy.apply(policy_params, observations)
        if evaluation:
            return actions
        noise = self.config.exploration_sigma * jax.random.normal(key, actions.shape, actions.dtype)
        return jnp.clip(actions + noise, -1.0, 1.0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-steps", type=int, default=20_000)
    args = parser.parse_args(argv)
    config = td3.TD3Config()
    experiment = ExperimentConfig(
        builder=DDPGBuilder(config),
        environment_factory=lambda seed: make_environment("gymnasium:Pendulum-v1", seed=seed, canonical_actions=True),
        network_factory=lambda spec: td3.make_networks(spec, config.policy_hidden_sizes, config.critic_hidden_sizes),
        max_num_actor_steps=args.max_steps,
        eval_every=min(2_000, args.max_steps),
    )
    result = run(experiment)
    print(f"DDPG: best evaluation return {result.best.mean_return:.1f} at step {result.best.actor_steps}")


if __name__ == "__main__":
    main()
