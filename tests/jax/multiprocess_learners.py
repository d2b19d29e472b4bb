"""DQN's and SAC's learners over a group of processes on this machine, against one device: one process of it.

``python -m tests.jax.multiprocess_learners PORT NUM_PROCESSES PROCESS_ID`` joins the group (coordinator
``127.0.0.1:PORT``, 2 CPU devices a process), builds each agent's batches from its own replay (the same in every
process), feeds the learner this process's rows of each and takes ``NUM_UPDATES`` updates under ``data`` and
``fsdp`` over every device of the group. Process 0 also takes them on one device of its own from the whole
batches and prints, per (agent, strategy), one JSON line: how far the group's state (gathered) is from it.
"""

from __future__ import annotations

import json
import sys

from acme.jax.multiprocess import join_learner_group

NUM_UPDATES = 50
LOCAL_DEVICES = 2


def main(port: int, num_processes: int, process_id: int) -> None:
    join_learner_group(f"127.0.0.1:{port}", num_processes, process_id, local_cpu_devices=LOCAL_DEVICES)
    import jax

    from acme.jax.sharding import LearnerSharding
    from tests.jax.learner_batches import after_updates, batches, compare

    for agent in ("dqn", "sac"):
        samples = batches(agent, NUM_UPDATES)
        rows = jax.tree.leaves(samples[0])[0].shape[0] // num_processes
        local = [jax.tree.map(lambda x: x[process_id * rows : (process_id + 1) * rows], s) for s in samples]
        one = after_updates(agent, samples, None, NUM_UPDATES) if process_id == 0 else None
        for strategy in ("data", "fsdp"):
            group = after_updates(agent, local, LearnerSharding(strategy), NUM_UPDATES)
            if process_id == 0:
                record = {"agent": agent, "strategy": strategy, "processes": num_processes}
                record["devices"] = jax.device_count()
                print(json.dumps({**record, **compare(one, group)}), flush=True)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]))
