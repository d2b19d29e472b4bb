"""gymnasium's classic-control tasks written in JAX, with gymnasium's constants and dynamics."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from acme import specs
from acme.environments.jax_native.base import JaxEnvironment


class CartPole(JaxEnvironment):
    """CartPole-v1: a pole on a cart pushed left (0) or right (1) with 10 N, Euler steps of 0.02 s; reward 1 per
    step (the terminating one included); terminates once |x| > 2.4 or |theta| > 12 degrees; 500 steps at most.
    The observation is ``(x, x_dot, theta, theta_dot)``, each drawn from U(-0.05, 0.05) at reset."""

    gravity = 9.8
    cart_mass = 1.0
    pole_mass = 0.1
    half_length = 0.5
    force = 10.0
    tau = 0.02
    x_threshold = 2.4
    theta_threshold = 12 * 2 * math.pi / 360

    def __init__(self, max_episode_steps: int = 500):
        super().__init__(max_episode_steps)

    def spec(self) -> specs.EnvironmentSpec:
        return specs.EnvironmentSpec(
            observations=specs.Array((4,), np.float32, name="observation"),
            actions=specs.DiscreteArray(2, dtype=np.int32, name="action"),
            rewards=specs.Array((), np.float32, name="reward"),
            discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, name="discount"),
        )

    def initial(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        physics = jax.random.uniform(key, (4,), jnp.float32, -0.05, 0.05)
        return physics, physics

    def transition(self, physics, action, key):
        del key  # deterministic
        x, x_dot, theta, theta_dot = physics
        total_mass = self.cart_mass + self.pole_mass
        pole_moment = self.pole_mass * self.half_length
        force = jnp.where(action == 1, self.force, -self.force)
        cos, sin = jnp.cos(theta), jnp.sin(theta)
        temp = (force + pole_moment * theta_dot**2 * sin) / total_mass
        theta_acc = (self.gravity * sin - cos * temp) / (
            self.half_length * (4.0 / 3.0 - self.pole_mass * cos**2 / total_mass)
        )
        x_acc = temp - pole_moment * theta_acc * cos / total_mass
        physics = jnp.stack(
            [
                x + self.tau * x_dot,
                x_dot + self.tau * x_acc,
                theta + self.tau * theta_dot,
                theta_dot + self.tau * theta_acc,
            ]
        ).astype(jnp.float32)
        terminated = (jnp.abs(physics[0]) > self.x_threshold) | (jnp.abs(physics[2]) > self.theta_threshold)
        return physics, physics, jnp.float32(1.0), terminated
