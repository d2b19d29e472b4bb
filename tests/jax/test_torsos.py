"""The convolutional torsos for pixels and how an agent's ``torso`` field picks one."""

from __future__ import annotations

import haiku as hk
import jax
import numpy as np
import pytest

from acme import specs
from acme.jax.torsos import NatureTorso, ResNetTorso, SmallTorso, pixel_torso

PIXELS = specs.BoundedArray((84, 84, 4), np.uint8, 0, 255)
BOARD = specs.BoundedArray((10, 10, 4), np.float32, 0.0, 1.0)  # MinAtar's
VECTOR = specs.Array((4,), np.float32)


@pytest.mark.parametrize("module, width", [(NatureTorso, 512), (SmallTorso, 128), (ResNetTorso, 256)])
def test_a_torso_scales_uint8_pixels_on_the_device_and_gives_its_features(module, width):
    torso = hk.without_apply_rng(hk.transform(lambda x: module()(x)))
    pixels = np.random.default_rng(0).integers(0, 256, (2, 84, 84, 4)).astype(np.uint8)
    params = torso.init(jax.random.PRNGKey(0), pixels)
    features = torso.apply(params, pixels)
    assert features.shape == (2, width) and bool((features >= 0).all())
    np.testing.assert_allclose(features, torso.apply(params, pixels.astype(np.float32) / 255.0), rtol=1e-5, atol=1e-6)


def test_the_torso_field_picks_a_convolution_for_images_and_refuses_one_for_vectors():
    assert pixel_torso("auto", PIXELS) == "nature" and pixel_torso("auto", VECTOR) is None
    assert pixel_torso("resnet", PIXELS) == "resnet" and pixel_torso("mlp", PIXELS) is None
    with pytest.raises(ValueError, match=r"DQN's torso 'nature' is convolutional: it needs image observations"):
        pixel_torso("nature", VECTOR, "DQN")
    assert pixel_torso("auto", BOARD) == "small" and pixel_torso("resnet", BOARD) == "resnet"
    with pytest.raises(ValueError, match=r"torso 'nature' needs images of at least 36x36 pixels.*\(10, 10, 4\)"):
        pixel_torso("nature", BOARD)
    with pytest.raises(ValueError, match="torso must be one of auto, mlp, nature, small, resnet"):
        pixel_torso("vit", PIXELS)
