"""The scaling model of issue #18 (limits, bottleneck, costs from a run's accounting) and the CPU accounting
that feeds it."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from benchmarks import cpu_accounting, scaling_model
from benchmarks.scaling_model import UnitCosts, predict

# 200 us of actor CPU, 300 us of learner CPU and 100 us of replay per actor step; a fifth of a core of background.
COSTS = UnitCosts(actor=200e-6, learner=300e-6, services=100e-6, background_cores=0.2, bytes_per_step=10_000)


def test_two_cores_are_bound_by_the_sum_of_cpu_per_step():
    prediction = predict(COSTS, num_actors=2, cores=2)
    assert prediction.bottleneck == "cores"
    assert prediction.steps_per_second == pytest.approx((2 - 0.2) / 600e-6)


def test_one_actor_or_a_one_core_learner_binds_when_cores_are_plenty():
    prediction = predict(COSTS, num_actors=1, cores=16, learner_cores=1)
    assert prediction.bottleneck == "learner"  # 3,333 steps/s, below the actor's 5,000
    assert prediction.steps_per_second == pytest.approx(1 / 300e-6)
    assert predict(COSTS, num_actors=1, cores=16).bottleneck == "actors"  # the learner may use all 16 cores
    fast_learner = UnitCosts(actor=200e-6, learner=50e-6, services=10e-6)
    assert predict(fast_learner, num_actors=1, cores=16).bottleneck == "actors"
    assert predict(fast_learner, num_actors=1, cores=16).steps_per_second == pytest.approx(5_000)


def test_actors_pinned_to_fewer_cores_share_them():
    # COSTS' actor takes 200 us a step: two actors on one core make 5,000 steps/s, not 10,000.
    assert predict(COSTS, num_actors=2, cores=16, actor_cores=1).limits["actors"] == pytest.approx(5_000)
    assert predict(COSTS, num_actors=2, cores=16).limits["actors"] == pytest.approx(10_000)
    assert predict(COSTS, num_actors=2, cores=16, actor_cores=8).limits["actors"] == pytest.approx(10_000)  # 1 each
    with pytest.raises(ValueError, match="actor_cores must be > 0"):
        predict(COSTS, num_actors=2, cores=16, actor_cores=0)


def test_the_learners_update_thread_binds_whatever_its_cores():
    costs = UnitCosts(actor=100e-6, learner=300e-6, services=10e-6, update=250e-6)
    prediction = predict(costs, num_actors=8, cores=64, learner_cores=32)
    assert prediction.bottleneck == "learner_updates"
    assert prediction.steps_per_second == pytest.approx(4_000)


def test_adding_actors_moves_the_bottleneck_to_the_learner_then_holds():
    fast_learner = UnitCosts(actor=1e-3, learner=100e-6, services=10e-6, bytes_per_step=1_000)
    rates = [predict(fast_learner, n, cores=n + 3, learner_cores=1).steps_per_second for n in (1, 4, 16, 64)]
    assert rates[:2] == pytest.approx([1_000, 4_000])
    assert rates[2] == rates[3] == pytest.approx(10_000)
    assert predict(fast_learner, 64, cores=67, learner_cores=1).bottleneck == "learner"


def test_network_and_replay_and_inference_limits():
    costs = UnitCosts(actor=1e-3, learner=1e-6, services=2e-6, bytes_per_step=1e6)
    assert predict(costs, 512, cores=600, network_bytes_per_second=1.25e9).bottleneck == "network"  # 1,250/s
    assert predict(costs, 512, cores=600, replay_cores=1).bottleneck == "replay"  # no network limit: 5e5/s
    costs = UnitCosts(actor=1e-3, learner=1e-7, services=1e-7, inference=1e-5)
    assert predict(costs, 512, cores=600).bottleneck == "inference"


# A device kind whose update costs 100 us + 1 us per sample, and 20 us per step of the gradients' reduction.
CORE = scaling_model.DeviceKind("core", fixed=100e-6, per_sample=1e-6, exchange=20e-6)


def test_a_layout_costs_one_devices_update_plus_the_reduction_and_divides_the_updates_per_step():
    one = scaling_model.LearnerLayout(CORE, devices=1, batch_per_device=64, samples_per_insert=32.0)
    assert one.update_seconds == pytest.approx(164e-6) and one.hosts == 1
    assert one.update_per_actor_step == pytest.approx(0.5 * 164e-6)  # 32 / 64 updates per actor step
    eight = scaling_model.LearnerLayout(CORE, devices=8, batch_per_device=64, samples_per_insert=32.0)
    assert eight.update_seconds == pytest.approx(164e-6 + 3 * 20e-6)  # a tree of 8: three steps
    assert eight.update_per_actor_step == pytest.approx(32 / 512 * 224e-6)
    assert scaling_model.LearnerLayout(CORE, 9, 64, 32.0, devices_per_host=8).hosts == 2


def test_the_reduction_across_hosts_costs_what_was_measured_between_processes():
    """A tree within each host at ``exchange`` a step, then one across the hosts at ``exchange_across_hosts``."""
    kind = scaling_model.DeviceKind("core", fixed=100e-6, per_sample=1e-6, exchange=20e-6, exchange_across_hosts=1e-3)
    thirty_two = scaling_model.LearnerLayout(kind, devices=32, batch_per_device=64, samples_per_insert=32.0)
    assert thirty_two.hosts == 4
    assert thirty_two.update_seconds == pytest.approx(164e-6 + 3 * 20e-6 + 2 * 1e-3)
    assert scaling_model.LearnerLayout(CORE, 32, 64, 32.0).update_seconds == pytest.approx(164e-6 + 5 * 20e-6)


def test_with_enough_learner_devices_the_rate_keeps_rising_with_the_actors():
    """One device binds at its update rate whatever the actors; a layout that grows with them lets them scale.
    The layout replaces the run's update cost, and the learner's other work divides over its hosts."""
    costs = UnitCosts(actor=1e-3, learner=400e-6, services=10e-6, update=300e-6)

    def rate(actors, devices):
        layout = scaling_model.LearnerLayout(CORE, devices, 64, 32.0)
        return predict(costs, actors, cores=actors + 8, learner_cores=4, learner_layout=layout)

    assert rate(16, 1).bottleneck == "learner_updates"
    assert rate(16, 1).steps_per_second == rate(64, 1).steps_per_second == pytest.approx(1 / (0.5 * 164e-6))
    rates = [rate(n, n // 4).steps_per_second for n in (8, 16, 32, 64)]  # 16 devices: two hosts
    assert rates == pytest.approx([8_000, 16_000, 32_000, 64_000])  # the actors bind: 1 ms each
    assert rate(64, 8).limits["learner"] == pytest.approx(4 / 100e-6)  # 400 - 300 us on one host's 4 cores
    assert rate(64, 16).limits["learner"] == pytest.approx(2 * 4 / 100e-6)  # two hosts


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: scaling_model.DeviceKind("x", fixed=-1.0, per_sample=0.0), "fixed must be a finite number >= 0"),
        (lambda: scaling_model.DeviceKind("x", fixed=0.0, per_sample=0.0), "cannot both be 0"),
        (lambda: scaling_model.LearnerLayout(CORE, 0, 64, 32.0), "devices must be an integer >= 1"),
        (lambda: scaling_model.LearnerLayout(CORE, 2, 64, 0.0), "samples_per_insert must be a finite number > 0"),
    ],
)
def test_device_kinds_and_layouts_refuse_impossible_values(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(actor=0.0, learner=1e-3, services=0.0), "must be > 0"),
        (dict(actor=1e-3, learner=1e-3, services=-1.0), "services must be a finite number >= 0"),
        (dict(actor=1e-3, learner=math.nan, services=0.0), "learner must be a finite number >= 0"),
    ],
)
def test_unit_costs_refuse_impossible_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        UnitCosts(**kwargs)


def test_predict_refuses_no_actors_and_too_few_cores():
    with pytest.raises(ValueError, match="num_actors must be an integer >= 1"):
        predict(COSTS, 0, cores=2)
    with pytest.raises(ValueError, match="cores must exceed the background"):
        predict(COSTS, 1, cores=0.2)
    with pytest.raises(ValueError, match="learner_cores must be > 0"):
        predict(COSTS, 1, cores=2, learner_cores=0)


def test_costs_from_run_divide_each_role_by_the_window():
    costs = scaling_model.costs_from_run(
        {"actors": 2.0, "learner": 5.0, "other_nodes": 1.0, "ray_daemons": 0.5, "driver": 0.5, "other": 9.0},
        actor_steps=10_000,
        wall_seconds=5.0,
        loopback_bytes=1e7,
    )
    assert costs == UnitCosts(
        actor=2e-4, learner=5e-4, services=1e-4, inference=0.0, background_cores=0.2, bytes_per_step=1_000
    )
    noisy = scaling_model.costs_from_run({"actors": 1.0, "learner": 1.0, "other_nodes": -0.1}, 1_000, 1.0, 0)
    assert noisy.services == 0.0  # a small role's start-up varied between the two runs
    with pytest.raises(ValueError, match="actor steps and seconds > 0"):
        scaling_model.costs_from_run({"actors": 1.0, "learner": 1.0}, 0, 1.0, 0)


def test_cpu_sampler_attributes_a_busy_process_to_its_role():
    """The sampler's CPU seconds for a process started after it equal what the process itself counted: the child
    spins, reports its own CPU time, and waits (alive) until the sampler's last sample has been taken."""
    spin = "import sys, time\nwhile time.process_time() < 0.3: pass\nprint(time.process_time(), flush=True)\n"
    spin += "sys.stdin.read()"
    with cpu_accounting.CpuSampler(interval=0.1) as sampler:
        child = subprocess.Popen([sys.executable, "-c", spin], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            reported = float(child.stdout.readline())
        except ValueError:
            child.kill()
            raise
    child.communicate(timeout=60)  # it exits once its stdin closes
    by_role = cpu_accounting.cpu_by_role(sampler, {"learner": child.pid})
    # Both count user + system time; psutil in clock ticks (10 ms), the child to the nanosecond.
    assert by_role["learner"] == pytest.approx(reported, abs=0.03)
    roles = {cpu_accounting.role_of(pid, s, {"learner": child.pid}, 1) for pid, s in sampler.processes.items()}
    assert "learner" in roles and roles <= {
        "learner",
        "actors",
        "inference",
        "driver",
        "ray_daemons",
        "other_nodes",
        "other",
    }


def test_role_of_names_ray_processes():
    sample = cpu_accounting.ProcessSample
    assert cpu_accounting.role_of(7, sample("raylet", "/x/raylet --node", 1.0), {}, 1) == "ray_daemons"
    assert cpu_accounting.role_of(7, sample("python", "ray::NodeActor.main", 1.0), {}, 1) == "other_nodes"
    assert cpu_accounting.role_of(7, sample("python", "ray::NodeActor.main", 1.0), {"actor_1": 7}, 1) == "actors"
    assert cpu_accounting.role_of(7, sample("python", "ray::NodeActor", 1.0), {"inference": 7}, 1) == "inference"
    assert cpu_accounting.role_of(1, sample("python", "bench.py", 1.0), {}, 1) == "driver"
    assert cpu_accounting.role_of(9, sample("vim", "vim x", 1.0), {}, 1) == "other"


def test_report_node_pids_writes_every_node(tmp_path):
    class Node:
        def __init__(self, pid):
            self._pid = pid

        def pid(self):
            return self._pid

    path = tmp_path / "pids.json"
    cpu_accounting.report_node_pids(str(path), Node(1), [Node(2), Node(3)], Node(4))
    assert json.loads(path.read_text()) == {"learner": 1, "actor_0": 2, "actor_1": 3, "inference": 4}
