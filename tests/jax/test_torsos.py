"""The convolutional torsos for pixels and how an agent's ``torso`` field picks one."""

from __future__ import annotations

import haiku as hk
import jax
import numpy as np
import pytest

from acme import specs
from acme.jax.torsos import NatureTorso, PooledTorso, ResNetTorso, SmallTorso, pixel_torso

PIXELS = specs.BoundedArray((84, 84, 4), np.uint8, 0, 255)
BOARD = specs.BoundedArray((10, 10, 4), np.float32, 0.0, 1.0)  # MinAtar's
VECTOR = specs.Array((4,), np.float32)


@pytest.mark.parametrize(
    "module, width", [(NatureTorso, 512), (SmallTorso, 128), (PooledTorso, 64), (ResNetTorso, 256)]
)
def test_a_torso_scales_uint8_pixels_on_the_device_and_gives_its_features(module, width):
    torso = hk.without_apply_rng(hk.transform(lambda x: module()(x)))
    pixels = np.random.default_rng(0).integers(0, 256, (2, 40, 40, 4)).astype(np.uint8)  # Nature's least is 36
    params = jax.jit(torso.init)(jax.random.PRNGKey(0), pixels)
    features = jax.jit(torso.apply)(params, pixels)
    assert features.shape == (2, width) and bool((features >= 0).all())
    scaled = jax.jit(torso.apply)(params, pixels.astype(np.float32) / 255.0)
    np.testing.assert_allclose(features, scaled, rtol=1e-5, atol=1e-6)


def test_the_torso_field_picks_a_convolution_for_images_and_refuses_one_for_vectors():
    assert pixel_torso("auto", PIXELS) == "nature" and pixel_torso("auto", VECTOR) is None
    assert pixel_torso("resnet", PIXELS) == "resnet" and pixel_torso("mlp", PIXELS) is None
    with pytest.raises(ValueError, match=r"DQN's torso 'nature' is convolutional: it needs image observations"):
        pixel_torso("nature", VECTOR, "DQN")
    assert pixel_torso("auto", BOARD) == "small" and pixel_torso("resnet", BOARD) == "resnet"
    with pytest.raises(ValueError, match=r"torso 'nature' needs images of at least 36x36 pixels.*\(10, 10, 4\)"):
        pixel_torso("nature", BOARD)
    with pytest.raises(ValueError, match="torso must be one of auto, mlp, nature, small, pooled, resnet"):
        pixel_torso("vit", PIXELS)


class _HaikuNature(hk.Module):  # the Nature torso as written with hk.Conv2D before Conv2D replaced it
    def __call__(self, x):
        x = x.astype(np.float32) / 255.0
        for channels, kernel, stride in ((32, 8, 4), (64, 4, 2), (64, 3, 1)):
            x = jax.nn.relu(hk.Conv2D(channels, kernel, stride, padding="VALID")(x))
        return jax.nn.relu(hk.Linear(512)(hk.Flatten()(x)))


class _HaikuBlock(hk.Module):
    def __call__(self, x):
        y = hk.Conv2D(x.shape[-1], 3, padding="SAME")(jax.nn.relu(x))
        return x + hk.Conv2D(x.shape[-1], 3, padding="SAME")(jax.nn.relu(y))


class _HaikuResNet(hk.Module):  # the ResNet torso as written with hk.Conv2D
    def __call__(self, x):
        x = x.astype(np.float32) / 255.0
        for channels in (4, 8):
            x = hk.Conv2D(channels, 3, padding="SAME")(x)
            x = hk.max_pool(x, window_shape=(1, 3, 3, 1), strides=(1, 2, 2, 1), padding="SAME")
            x = _HaikuBlock(name="__residual_block")(x)
            x = _HaikuBlock(name="__residual_block")(x)
        return jax.nn.relu(hk.Linear(256)(hk.Flatten()(jax.nn.relu(x))))


class _HaikuPooled(hk.Module):  # pgx's MinAtar PPO body, with hk.Conv2D
    def __call__(self, x):
        x = jax.nn.relu(hk.Conv2D(32, 2)(x.astype(np.float32) / 255.0))
        x = hk.avg_pool(x, window_shape=(1, 2, 2, 1), strides=(1, 2, 2, 1), padding="VALID")
        return jax.nn.relu(hk.Linear(64)(hk.Flatten()(x)))


@pytest.mark.parametrize("by_slices", [True, False], ids=["slices", "lax"])
@pytest.mark.parametrize(
    "ours, haiku, shape",
    [
        (lambda x: NatureTorso()(x), lambda x: _HaikuNature(name="nature_torso")(x), (2, 45, 37, 3)),
        (lambda x: ResNetTorso((4, 8))(x), lambda x: _HaikuResNet(name="res_net_torso")(x), (2, 13, 11, 2)),
        (lambda x: PooledTorso()(x), lambda x: _HaikuPooled(name="pooled_torso")(x), (3, 10, 10, 7)),
    ],
    # odd sizes: strides leave a remainder, SAME pads unevenly (the pooled torso's 2x2 kernel pads one side)
    ids=["nature-odd", "resnet-odd", "pooled-board"],
)
def test_conv2d_has_haiku_conv2ds_parameters_and_function_in_both_forms(monkeypatch, by_slices, ours, haiku, shape):
    """Checkpoints written with ``hk.Conv2D`` load into ``Conv2D`` and give the same outputs, in both forms."""
    from acme.jax import torsos

    monkeypatch.setattr(torsos, "convolves_by_slices", lambda: by_slices)
    pixels = np.random.default_rng(1).integers(0, 256, shape).astype(np.uint8)
    new, old = (hk.without_apply_rng(hk.transform(f)) for f in (ours, haiku))
    # hk.Conv2D's init runs eagerly (one convolution op each; jitted, its rank-4 draws took XLA seconds to compile)
    new_params, old_params = jax.jit(new.init)(jax.random.PRNGKey(3), pixels), old.init(jax.random.PRNGKey(3), pixels)
    assert jax.tree.structure(new_params) == jax.tree.structure(old_params)  # the same names and shapes,
    jax.tree.map(np.testing.assert_array_equal, new_params, old_params)  # and the same initial values
    apply = lambda f, p: jax.jit(f.apply)(p, pixels)  # noqa: E731
    np.testing.assert_allclose(apply(new, new_params), apply(old, old_params), rtol=1e-4, atol=1e-5)
    gradient = lambda f, p: jax.jit(jax.grad(lambda p: (f.apply(p, pixels) ** 2).sum()))(p)  # noqa: E731
    for a, b in zip(jax.tree.leaves(gradient(new, new_params)), jax.tree.leaves(gradient(old, old_params))):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)
