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


class MemoryCartPole(CartPole):
    """CartPole-v1 observed through its cart position and pole angle alone, ``(x, theta)``: the velocities must be
    remembered (inferred from consecutive observations). The host task ``memory:CartPole-v1`` (gymnasium's CartPole
    with the same two of its four observations) is its reference; the dynamics are ``CartPole``'s."""

    observed = (0, 2)

    def spec(self) -> specs.EnvironmentSpec:
        return super().spec()._replace(observations=specs.Array((2,), np.float32, name="observation"))

    def initial(self, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        physics, _ = super().initial(key)
        return physics, physics[jnp.array(self.observed)]

    def transition(self, physics, action, key):
        physics, _, reward, terminated = super().transition(physics, action, key)
        return physics, physics[jnp.array(self.observed)], reward, terminated


def _spec(observations: specs.Array, actions: specs.Array) -> specs.EnvironmentSpec:
    return specs.EnvironmentSpec(
        observations=observations,
        actions=actions,
        rewards=specs.Array((), np.float32, name="reward"),
        discounts=specs.BoundedArray((), np.float32, 0.0, 1.0, name="discount"),
    )


def _bounded(low, high, name: str) -> specs.BoundedArray:
    low, high = np.asarray(low, np.float32), np.asarray(high, np.float32)
    return specs.BoundedArray(low.shape, np.float32, low, high, name=name)


def _wrap_angle(angle: jax.Array) -> jax.Array:
    """``angle`` moved by whole turns into [-pi, pi], as gymnasium's ``wrap`` does (pi and -pi stay as they are)."""
    turn = 2 * jnp.pi
    angle = jnp.where(angle > jnp.pi, angle - turn * jnp.ceil((angle - jnp.pi) / turn), angle)
    return jnp.where(angle < -jnp.pi, angle + turn * jnp.ceil((-jnp.pi - angle) / turn), angle)


class Acrobot(JaxEnvironment):
    """Acrobot-v1: two links, torque -1, 0 or +1 on the joint between them; one RK4 step of 0.2 s ("book"
    dynamics); reward -1 per step, 0 on the step that lifts the tip above the bar (-cos(t1) - cos(t1 + t2) > 1);
    500 steps at most. The observation is ``(cos t1, sin t1, cos t2, sin t2, dt1, dt2)``; the state starts in
    U(-0.1, 0.1)."""

    dt = 0.2
    link_mass = 1.0
    link_length = 1.0
    link_center = 0.5
    link_moment = 1.0
    max_velocity_1 = 4 * math.pi
    max_velocity_2 = 9 * math.pi

    def __init__(self, max_episode_steps: int = 500):
        super().__init__(max_episode_steps)

    def spec(self) -> specs.EnvironmentSpec:
        high = [1.0, 1.0, 1.0, 1.0, self.max_velocity_1, self.max_velocity_2]
        return _spec(
            _bounded([-h for h in high], high, "observation"), specs.DiscreteArray(3, dtype=np.int32, name="action")
        )

    def _observation(self, physics: jax.Array) -> jax.Array:
        t1, t2, v1, v2 = physics
        return jnp.stack([jnp.cos(t1), jnp.sin(t1), jnp.cos(t2), jnp.sin(t2), v1, v2]).astype(jnp.float32)

    def initial(self, key):
        physics = jax.random.uniform(key, (4,), jnp.float32, -0.1, 0.1)
        return physics, self._observation(physics)

    def _derivatives(self, state: jax.Array, torque: jax.Array) -> jax.Array:
        m, l1, lc, moment, g = self.link_mass, self.link_length, self.link_center, self.link_moment, 9.8
        t1, t2, v1, v2 = state
        d1 = m * lc**2 + m * (l1**2 + lc**2 + 2 * l1 * lc * jnp.cos(t2)) + 2 * moment
        d2 = m * (lc**2 + l1 * lc * jnp.cos(t2)) + moment
        phi2 = m * lc * g * jnp.cos(t1 + t2 - jnp.pi / 2.0)
        phi1 = (
            -m * l1 * lc * v2**2 * jnp.sin(t2)
            - 2 * m * l1 * lc * v2 * v1 * jnp.sin(t2)
            + (m * lc + m * l1) * g * jnp.cos(t1 - jnp.pi / 2)
            + phi2
        )
        acc2 = (torque + d2 / d1 * phi1 - m * l1 * lc * v1**2 * jnp.sin(t2) - phi2) / (m * lc**2 + moment - d2**2 / d1)
        acc1 = -(d2 * acc2 + phi1) / d1
        return jnp.stack([v1, v2, acc1, acc2])

    def transition(self, physics, action, key):
        del key  # no torque noise, as gymnasium's default
        torque = jnp.asarray(action, jnp.float32) - 1.0
        h = self.dt
        k1 = self._derivatives(physics, torque)
        k2 = self._derivatives(physics + h / 2 * k1, torque)
        k3 = self._derivatives(physics + h / 2 * k2, torque)
        k4 = self._derivatives(physics + h * k3, torque)
        t1, t2, v1, v2 = physics + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        physics = jnp.stack(
            [
                _wrap_angle(t1),
                _wrap_angle(t2),
                jnp.clip(v1, -self.max_velocity_1, self.max_velocity_1),
                jnp.clip(v2, -self.max_velocity_2, self.max_velocity_2),
            ]
        ).astype(jnp.float32)
        terminated = -jnp.cos(physics[0]) - jnp.cos(physics[1] + physics[0]) > 1.0
        return physics, self._observation(physics), jnp.where(terminated, 0.0, -1.0), terminated


class _MountainCarBase(JaxEnvironment):
    """The car of MountainCar-v0 and MountainCarContinuous-v0: ``(position, velocity)``, position in [-1.2, 0.6],
    speed at most 0.07, starting at rest in U(-0.6, -0.4); stopped at the left wall."""

    min_position, max_position, max_speed = -1.2, 0.6, 0.07

    def _observations(self) -> specs.BoundedArray:
        return _bounded([self.min_position, -self.max_speed], [self.max_position, self.max_speed], "observation")

    def initial(self, key):
        physics = jnp.stack([jax.random.uniform(key, (), jnp.float32, -0.6, -0.4), jnp.float32(0.0)])
        return physics, physics

    def _move(self, physics: jax.Array, push: jax.Array) -> jax.Array:
        position, velocity = physics
        velocity = jnp.clip(velocity + push - 0.0025 * jnp.cos(3 * position), -self.max_speed, self.max_speed)
        position = jnp.clip(position + velocity, self.min_position, self.max_position)
        velocity = jnp.where((position == self.min_position) & (velocity < 0), 0.0, velocity)
        return jnp.stack([position, velocity]).astype(jnp.float32)


class MountainCar(_MountainCarBase):
    """MountainCar-v0: push left (0), nothing (1) or right (2) with 0.001; reward -1 per step; terminates at
    position >= 0.5 with velocity >= 0; 200 steps at most."""

    def __init__(self, max_episode_steps: int = 200):
        super().__init__(max_episode_steps)

    def spec(self) -> specs.EnvironmentSpec:
        return _spec(self._observations(), specs.DiscreteArray(3, dtype=np.int32, name="action"))

    def transition(self, physics, action, key):
        del key
        physics = self._move(physics, (jnp.asarray(action, jnp.float32) - 1.0) * 0.001)
        terminated = (physics[0] >= 0.5) & (physics[1] >= 0.0)
        return physics, physics, jnp.float32(-1.0), terminated


class MountainCarContinuous(_MountainCarBase):
    """MountainCarContinuous-v0: a force in [-1, 1] (clipped) times 0.0015; reward 100 on reaching position 0.45
    with velocity >= 0 (which terminates), minus 0.1 * action^2 each step; 999 steps at most."""

    def __init__(self, max_episode_steps: int = 999):
        super().__init__(max_episode_steps)

    def spec(self) -> specs.EnvironmentSpec:
        return _spec(self._observations(), _bounded([-1.0], [1.0], "action"))

    def transition(self, physics, action, key):
        del key
        force = jnp.clip(jnp.asarray(action, jnp.float32)[0], -1.0, 1.0)
        physics = self._move(physics, force * 0.0015)
        terminated = (physics[0] >= 0.45) & (physics[1] >= 0.0)
        reward = jnp.where(terminated, 100.0, 0.0) - 0.1 * jnp.asarray(action, jnp.float32)[0] ** 2
        return physics, physics, reward, terminated


class Pendulum(JaxEnvironment):
    """Pendulum-v1: torque in [-2, 2] (clipped) on a pendulum, g = 10, steps of 0.05 s, speed at most 8; reward
    -(angle^2 + 0.1 * speed^2 + 0.001 * torque^2) of the state before the step; never terminates; 200 steps. The
    observation is ``(cos, sin, speed)``; angle and speed start in U(-pi, pi) and U(-1, 1)."""

    max_speed, max_torque, dt, gravity, mass, length = 8.0, 2.0, 0.05, 10.0, 1.0, 1.0

    def __init__(self, max_episode_steps: int = 200):
        super().__init__(max_episode_steps)

    def spec(self) -> specs.EnvironmentSpec:
        high = [1.0, 1.0, self.max_speed]
        return _spec(_bounded([-h for h in high], high, "observation"), _bounded([-2.0], [2.0], "action"))

    @staticmethod
    def _observation(physics: jax.Array) -> jax.Array:
        return jnp.stack([jnp.cos(physics[0]), jnp.sin(physics[0]), physics[1]]).astype(jnp.float32)

    def initial(self, key):
        physics = jax.random.uniform(key, (2,), jnp.float32, -1.0, 1.0) * jnp.array([jnp.pi, 1.0], jnp.float32)
        return physics, self._observation(physics)

    def transition(self, physics, action, key):
        del key
        angle, speed = physics
        torque = jnp.clip(jnp.asarray(action, jnp.float32)[0], -self.max_torque, self.max_torque)
        normalized = (angle + jnp.pi) % (2 * jnp.pi) - jnp.pi
        cost = normalized**2 + 0.1 * speed**2 + 0.001 * torque**2
        g, m, length = self.gravity, self.mass, self.length
        speed = speed + (3 * g / (2 * length) * jnp.sin(angle) + 3.0 / (m * length**2) * torque) * self.dt
        speed = jnp.clip(speed, -self.max_speed, self.max_speed)
        physics = jnp.stack([angle + speed * self.dt, speed]).astype(jnp.float32)
        return physics, self._observation(physics), -cost, jnp.bool_(False)
