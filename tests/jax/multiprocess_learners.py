"""DQN's and SAC's learners over a group of processes on this machine, against one device: one process of it.

``python -m tests.jax.multiprocess_learners PORT NUM_PROCESSES PROCESS_ID`` joins the group (coordinator
``127.0.0.1:PORT``, 2 CPU devices a process), builds each agent's batches from its own replay (the same in every
process), feeds the learner this process's rows of each and takes ``NUM_UPDATES`` updates under ``data`` and
``fsdp`` over every device of the group. Process 0 also takes them on one device of its own from the whole
batches and prints, per (agent, strategy), one JSON line: how far the group's state (gathered) is from it, and
how far a group that restored the one-device state after ``NUM_UPDATES`` and took ``MORE`` updates is from the
one device that took them too (a checkpoint of one process resuming in P, as one of P resumes in one: the saved
state is whole).
"""

from __future__ import annotations

import json
import sys

from acme.jax.multiprocess import join_learner_group

# DQN's target copy (every 200 steps) falls outside either count; SAC's Polyak averaging and both optimisers' moments
# change at every update, so a few show a group that updates otherwise than one device.
NUM_UPDATES = 10
MORE = 10
LOCAL_DEVICES = 2


def main(port: int, num_processes: int, process_id: int) -> None:
    join_learner_group(f"127.0.0.1:{port}", num_processes, process_id, local_cpu_devices=LOCAL_DEVICES)
    import jax
    import numpy as np

    from acme.jax.sharding import LearnerSharding
    from tests.jax.learner_batches import batches, compare, learner

    def leaves(trained) -> list:
        return [np.asarray(leaf) for leaf in jax.tree.leaves(trained.save())]

    for agent in ("dqn", "sac"):
        samples = batches(agent, NUM_UPDATES + MORE)
        rows = jax.tree.leaves(samples[0])[0].shape[0] // num_processes
        local = [jax.tree.map(lambda x: x[process_id * rows : (process_id + 1) * rows], s) for s in samples]
        one = learner(agent, samples, None)
        for _ in range(NUM_UPDATES):
            one.step()
        saved = one.save()
        for _ in range(MORE):
            one.step()
        for strategy in ("data", "fsdp"):
            group = learner(agent, local, LearnerSharding(strategy))  # one compiled update for both checks
            for _ in range(NUM_UPDATES):
                group.step()
            after = leaves(group)  # every process gathers, together
            group.restore(saved)  # the one-device state, then the next MORE batches
            for _ in range(MORE):
                group.step()
            resumed_after = leaves(group)
            if process_id == 0:
                record = {"agent": agent, "strategy": strategy, "processes": num_processes}
                record["devices"] = jax.device_count()
                resume = compare(leaves_of(saved), after)
                resumed_record = compare(leaves(one), resumed_after)
                print(json.dumps({**record, **resume, "resumed": resumed_record}), flush=True)


def leaves_of(state) -> list:
    import jax
    import numpy as np

    return [np.asarray(leaf) for leaf in jax.tree.leaves(state)]


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]))
