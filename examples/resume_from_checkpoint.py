"""Checkpoint a run, stop it, and resume it where it stopped: learner, replay, counts and evaluations.

The first call trains for half the budget with a checkpoint directory; the
second call, with the same directory and the full budget, restores the newest
checkpoint and goes on from there. A run killed at any moment (even with
SIGKILL) resumes the same way from its last checkpoint.

    python examples/resume_from_checkpoint.py [--directory /tmp/dqn-cartpole] [--max-steps 50000]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile

from acme.environments import make_environment
from acme.experiments import CheckpointingConfig, ExperimentConfig, run
from agents import dqn


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--directory", default=None, help="the checkpoint directory (default: a new temporary one)")
    parser.add_argument("--max-steps", type=int, default=50_000)
    args = parser.parse_args(argv)
    directory = args.directory or tempfile.mkdtemp(prefix="dqn-cartpole-")

    config = dqn.DQNConfig()
    experiment = ExperimentConfig(
        builder=dqn.DQNBuilder(config),
        environment_factory=lambda seed: make_environment("gymnasium:CartPole-v1", seed=seed),
        network_factory=lambda spec: dqn.make_networks(spec, config.hidden_sizes),
        max_num_actor_steps=args.max_steps // 2,
        eval_every=max(1, args.max_steps // 10),
        checkpointing=CheckpointingConfig(directory, every_minutes=5.0),  # and always at the end of a run
    )
    first = run(experiment, progress=False)
    print(f"stopped at actor step {first.actor_steps} (learner step {first.learner_steps}); checkpoints in {directory}")

    resumed = run(dataclasses.replace(experiment, max_num_actor_steps=args.max_steps), progress=False)
    print(
        f"resumed and finished at actor step {resumed.actor_steps} (learner step {resumed.learner_steps}); "
        f"{len(resumed.evaluations)} evaluations in all, the best {resumed.best.mean_return:.1f}"
    )


if __name__ == "__main__":
    main()
