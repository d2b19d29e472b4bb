"""The quickstart's experiment, distributed: a learner, N actors and an evaluator as Ray actors.

``make_distributed_experiment`` turns the same ``ExperimentConfig`` into a
program of nodes, and ``launch.launch`` runs it: ``launcher="ray"`` makes every
node a Ray actor (a local Ray instance here; ``address="host:port"`` joins a
cluster), ``launcher="threads"`` runs every node as a thread of this process.
The learner holds the replay tables, and each actor sends it its items over
an authenticated direct connection; where the ``reverb`` extra is installed
(``make install-reverb``), a reverb server node holds them instead.

    python examples/distributed_ray.py [--num-actors 2] [--max-steps 50000] [--launcher ray]
"""

from __future__ import annotations

import argparse

import launch
from acme.environments import make_environment
from acme.experiments import ExperimentConfig, make_distributed_experiment
from agents import dqn


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-actors", type=int, default=2)
    parser.add_argument("--max-steps", type=int, default=50_000, help="actor steps, counted across all actors")
    parser.add_argument("--launcher", choices=("ray", "threads"), default="ray")
    args = parser.parse_args(argv)

    config = dqn.DQNConfig()
    experiment = ExperimentConfig(
        builder=dqn.DQNBuilder(config),
        environment_factory=lambda seed: make_environment("gymnasium:CartPole-v1", seed=seed),
        network_factory=lambda spec: dqn.make_networks(spec, config.hidden_sizes),
        max_num_actor_steps=args.max_steps,
        eval_every=max(1, args.max_steps // 10),
    )
    program = make_distributed_experiment(experiment, num_actors=args.num_actors)
    launch.launch(program, launcher=args.launcher)  # returns when the actors have spent the budget
    print(f"done: {args.max_steps} actor steps over {args.num_actors} actors ({args.launcher} launcher)")


if __name__ == "__main__":
    main()
