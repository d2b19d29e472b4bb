"""collection_paused: the cyclic collector is off inside the block and as it was after it, exceptions included."""

import gc

import pytest

from acme.utils.garbage_collection import collection_paused


def test_the_collector_is_off_inside_and_back_on_after_even_when_the_block_raises():
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), collection_paused():
        raise ValueError("refused")
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    try:
        with collection_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
