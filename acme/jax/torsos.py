"""Convolutional torsos for pixel observations, shared by the agents that act on them (DQN, R2D2, IMPALA, PPO).

- ``NatureTorso``: the Nature DQN network's body (Mnih et al., 2015): three ReLU convolutions (32 8x8 stride 4,
  64 4x4 stride 2, 64 3x3 stride 1) and a 512-unit ReLU layer;
- ``SmallTorso``: the network of MinAtar's DQN (Young & Tian, 2019) for small boards: one 16-channel 3x3 ReLU
  convolution and a 128-unit ReLU layer;
- ``PooledTorso``: the body of pgx's MinAtar PPO example (sotetsuk/pgx, examples/minatar-ppo): one 32-channel 2x2
  ReLU convolution (SAME), 2x2 average pooling and a 64-unit ReLU layer;
- ``ResNetTorso``: the IMPALA network's body (Espeholt et al., 2018): three sections of a 3x3 convolution, a 3x3
  max-pool of stride 2 and two residual blocks (16, 32 and 32 channels), then a 256-unit ReLU layer.

All take ``[B, H, W, C]`` pixels, uint8 as environments give them and replay stores them, and scale them to
[0, 1] on the device.

On the CPU, the Nature and ResNet torsos compute each convolution as one dense layer over strided slices of its
input (``Conv2D``, the same function with ``hk.Conv2D``'s parameters): inside ``lax.scan``, as the fused updates
of ``num_sgd_steps_per_step`` run, XLA's CPU backend takes the convolution's weight gradient off its fast path,
and a Nature-torso update at batch 32 took 16x as long as the same update jitted alone (``benchmarks/atari.py``
measures both forms). Other backends run ``lax.conv_general_dilated``.

An agent's config field ``torso`` picks one: ``auto`` (for image observations the Nature torso, or the small one
for images under 36x36, which the Nature torso's strides cannot take; the agent's MLP otherwise), ``mlp``,
``nature``, ``small``, ``pooled`` or ``resnet``.
"""

from __future__ import annotations

import math
from typing import Any

import haiku as hk
import jax
import jax.numpy as jnp

from acme import specs

TORSOS = ("auto", "mlp", "nature", "small", "pooled", "resnet")
CONVOLUTIONAL = ("nature", "small", "pooled", "resnet")
NATURE_MIN_SIZE = 36  # the smallest height and width the Nature torso's three VALID convolutions take


def is_image(observation_spec: Any) -> bool:
    """Whether the observation is one ``[H, W, C]`` array (pixels)."""
    return isinstance(observation_spec, specs.Array) and len(observation_spec.shape) == 3


def pixel_torso(torso: str, observation_spec: Any, agent: str = "This agent") -> str | None:
    """The convolutional torso ``torso`` names for this observation (``nature``, ``small``, ``pooled`` or
    ``resnet``), or None for the agent's MLP; refuses a convolutional torso for observations that are not images,
    and the Nature torso for images smaller than it takes."""
    if torso not in TORSOS:
        raise ValueError(f"torso must be one of {', '.join(TORSOS)}, got {torso!r}.")
    image = is_image(observation_spec)
    if torso == "auto":
        if not image:
            return None
        return "nature" if min(observation_spec.shape[:2]) >= NATURE_MIN_SIZE else "small"
    if torso in CONVOLUTIONAL and not image:
        shapes = [tuple(s.shape) for s in jax.tree.leaves(observation_spec)]
        raise ValueError(
            f"{agent}'s torso {torso!r} is convolutional: it needs image observations (one [H, W, C] array), and "
            f"this environment's are {shapes}. Use torso 'mlp' or 'auto'."
        )
    if torso == "nature" and min(observation_spec.shape[:2]) < NATURE_MIN_SIZE:
        raise ValueError(
            f"{agent}'s torso 'nature' needs images of at least {NATURE_MIN_SIZE}x{NATURE_MIN_SIZE} pixels, and this "
            f"environment's are {tuple(observation_spec.shape)}. Use torso 'small', 'resnet' or 'auto'."
        )
    return None if torso == "mlp" else torso


def _scaled(pixels: jnp.ndarray) -> jnp.ndarray:
    return pixels.astype(jnp.float32) / 255.0 if pixels.dtype == jnp.uint8 else pixels.astype(jnp.float32)


def _conv_by_slices(x: jnp.ndarray, w: jnp.ndarray, stride: int) -> jnp.ndarray:
    """A VALID convolution of ``[N, H, W, C]`` by ``w`` (``[k, k, C, O]``) as one matrix product over the k*k strided
    slices of ``x`` (the same sum as the convolution, in another order)."""
    k, n, height, width, channels = w.shape[0], *x.shape
    rows, cols = (height - k) // stride + 1, (width - k) // stride + 1
    limit = lambda i, j: (n, i + stride * (rows - 1) + 1, j + stride * (cols - 1) + 1, channels)  # noqa: E731
    slices = [jax.lax.slice(x, (0, i, j, 0), limit(i, j), (1, stride, stride, 1)) for i in range(k) for j in range(k)]
    return jnp.concatenate(slices, axis=-1) @ w.reshape(-1, w.shape[-1])


class Conv2D(hk.Module):
    """``hk.Conv2D`` (square kernel, VALID or SAME padding) with the same parameters, names and initial values,
    computed as a dense layer over strided slices on the CPU (see the module docstring) and as
    ``lax.conv_general_dilated`` elsewhere."""

    def __init__(self, channels: int, kernel: int, stride: int = 1, padding: str = "VALID", name: str = "conv2_d"):
        super().__init__(name=name)
        if padding not in ("VALID", "SAME"):
            raise ValueError(f"padding must be 'VALID' or 'SAME', got {padding!r}.")
        self._channels, self._kernel, self._stride, self._padding = channels, kernel, stride, padding

    def __call__(self, x: jnp.ndarray) -> jnp.ndarray:
        k, stride = self._kernel, self._stride
        w_init = hk.initializers.TruncatedNormal(stddev=1.0 / math.sqrt(k * k * x.shape[-1]))  # hk.Conv2D's
        w = hk.get_parameter("w", (k, k, x.shape[-1], self._channels), x.dtype, init=_drawn_flat(w_init))
        b = hk.get_parameter("b", (self._channels,), x.dtype, init=jnp.zeros)
        leading, image = x.shape[:-3], x.reshape((-1, *x.shape[-3:]))
        if self._padding == "SAME":  # as lax pads: the extra row or column (when odd) at the end
            pads = [_same_padding(size, k, stride) for size in image.shape[1:3]]
            image = jnp.pad(image, ((0, 0), *pads, (0, 0)))
        if convolves_by_slices():
            y = _conv_by_slices(image, w, stride)
        else:
            y = jax.lax.conv_general_dilated(image, w, (stride, stride), "VALID", dimension_numbers=_NHWC)
        return (y + b).reshape((*leading, *y.shape[1:]))


_NHWC = ("NHWC", "HWIO", "NHWC")


def _drawn_flat(init: hk.initializers.Initializer) -> hk.initializers.Initializer:
    """``init`` (one whose values are an elementwise function of one random draw) drawn as a vector and
    reshaped: the same values, since jax's threefry numbers each draw by its flat index, but XLA's CPU backend
    compiled a rank-4 draw in seconds (1.2 s for a 3x3x4x4 kernel, 5 s for 3x3x16x16; the ResNet torso's init took
    29 s, against 3 s drawn flat)."""

    def drawn(shape: Any, dtype: Any) -> jnp.ndarray:
        return init((math.prod(shape),), dtype).reshape(shape)

    return drawn


def convolves_by_slices() -> bool:
    """Whether ``Conv2D`` computes by strided slices (on the CPU) rather than ``lax.conv_general_dilated``."""
    return jax.default_backend() == "cpu"


def _same_padding(size: int, kernel: int, stride: int) -> tuple[int, int]:
    total = max((-(-size // stride) - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


class NatureTorso(hk.Module):
    """Three ReLU convolutions and a 512-unit ReLU layer: ``[B, H, W, C]`` -> ``[B, 512]``."""

    def __init__(self, name: str | None = None):
        super().__init__(name=name)

    def __call__(self, pixels: jnp.ndarray) -> jnp.ndarray:
        x = _scaled(pixels)
        for channels, kernel, stride in ((32, 8, 4), (64, 4, 2), (64, 3, 1)):
            x = jax.nn.relu(Conv2D(channels, kernel, stride, padding="VALID")(x))
        return jax.nn.relu(hk.Linear(512)(hk.Flatten()(x)))


class SmallTorso(hk.Module):
    """One 16-channel 3x3 ReLU convolution (VALID) and a 128-unit ReLU layer: ``[B, H, W, C]`` -> ``[B, 128]``.

    The convolution is written as one dense layer over each pixel's 3x3 patch (the same function): inside the
    on-device loop's scans XLA's CPU backend runs it several times faster than ``hk.Conv2D`` (measured on PPO
    on MinAtar Breakout when it was written; no results file holds the figure)."""

    def __init__(self, name: str | None = None):
        super().__init__(name=name)

    def __call__(self, pixels: jnp.ndarray) -> jnp.ndarray:
        x = _scaled(pixels)
        h, w = x.shape[-3] - 2, x.shape[-2] - 2
        x = jnp.concatenate([x[..., i : i + h, j : j + w, :] for i in range(3) for j in range(3)], axis=-1)
        x = jax.nn.relu(hk.Linear(16)(x))
        return jax.nn.relu(hk.Linear(128)(hk.Flatten()(x)))


class PooledTorso(hk.Module):
    """One 32-channel 2x2 ReLU convolution (SAME), 2x2 average pooling (VALID) and a 64-unit ReLU layer:
    ``[B, H, W, C]`` -> ``[B, 64]``. For a 10x10 MinAtar board about a third of ``SmallTorso``'s multiply-adds."""

    def __init__(self, name: str | None = None):
        super().__init__(name=name)

    def __call__(self, pixels: jnp.ndarray) -> jnp.ndarray:
        x = jax.nn.relu(Conv2D(32, 2, padding="SAME")(_scaled(pixels)))
        x = hk.avg_pool(x, window_shape=(1, 2, 2, 1), strides=(1, 2, 2, 1), padding="VALID")
        return jax.nn.relu(hk.Linear(64)(hk.Flatten()(x)))


class _ResidualBlock(hk.Module):
    def __call__(self, x: jnp.ndarray) -> jnp.ndarray:
        channels = x.shape[-1]
        y = Conv2D(channels, 3, padding="SAME")(jax.nn.relu(x))
        y = Conv2D(channels, 3, padding="SAME")(jax.nn.relu(y))
        return x + y


class ResNetTorso(hk.Module):
    """IMPALA's residual body and a 256-unit ReLU layer: ``[B, H, W, C]`` -> ``[B, 256]``."""

    def __init__(self, channels: tuple[int, ...] = (16, 32, 32), name: str | None = None):
        super().__init__(name=name)
        self._channels = channels

    def __call__(self, pixels: jnp.ndarray) -> jnp.ndarray:
        x = _scaled(pixels)
        for channels in self._channels:
            x = Conv2D(channels, 3, padding="SAME")(x)
            x = hk.max_pool(x, window_shape=(1, 3, 3, 1), strides=(1, 2, 2, 1), padding="SAME")
            x = _ResidualBlock()(x)
            x = _ResidualBlock()(x)
        return jax.nn.relu(hk.Linear(256)(hk.Flatten()(jax.nn.relu(x))))


def conv_torso(kind: str, name: str | None = None) -> hk.Module:
    """The torso ``kind`` (``nature``, ``small``, ``pooled`` or ``resnet``), inside a haiku transform."""
    return {"nature": NatureTorso, "small": SmallTorso, "pooled": PooledTorso, "resnet": ResNetTorso}[kind](name=name)
