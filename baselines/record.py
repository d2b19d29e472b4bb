"""``python -m baselines record``: episodes of a trained policy snapshot, written as a Minari dataset."""

from __future__ import annotations

import argparse
import os

from baselines import arguments


def add_parser(commands) -> None:
    record = commands.add_parser(
        "record",
        help="record a policy snapshot's episodes as a dataset (Minari's format) for offline learning",
        description="Plays --episodes episodes with a policy snapshot (its greedy policy, with epsilon-random "
        "discrete actions or Gaussian noise on continuous ones where asked) and writes them as a new Minari "
        "dataset in --out, with the environment, the snapshot, the exploration and the returns in its metadata. "
        "Train on it with: python -m baselines run AGENT --env ENV --dataset OUT.",
    )
    record.add_argument("--snapshot", required=True, help="a policy snapshot (or a run directory holding policy/)")
    record.add_argument("--episodes", type=arguments.batch_count, required=True, help="episodes to record")
    record.add_argument("--out", required=True, help="a new directory for the dataset")
    record.add_argument("--seed", type=arguments.seed, default=0, help="seeds the environment and the exploration")
    record.add_argument(
        "--epsilon",
        type=arguments.number(0, strict=False),
        default=0.0,
        help="discrete actions: the probability of a uniformly random action instead of the policy's",
    )
    record.add_argument(
        "--noise",
        type=arguments.number(0, strict=False),
        default=0.0,
        help="continuous actions: the standard deviation of Gaussian noise added to the policy's action, in "
        "units of half the action's range",
    )


def record_command(args: argparse.Namespace, snapshot_directory: str) -> int:
    from acme import snapshots, specs
    from acme.datasets.minari_format import holds_dataset, write_dataset
    from acme.datasets.recording import explore, play_episodes
    from baselines.policy_export import load_policy

    if holds_dataset(args.out):
        raise ValueError(f"{args.out} already holds a dataset; record to a new directory (nothing is overwritten).")
    policy, environment, params = load_policy(snapshot_directory, seed=args.seed)
    _, metadata = snapshots.load_policy_snapshot(snapshot_directory)
    spec = specs.make_environment_spec(environment)
    perturb = explore(spec, epsilon=args.epsilon, noise=args.noise)
    print(
        f"Recording {args.episodes} episodes of {metadata['agent']} on {metadata['environment_id']} "
        f"(epsilon {args.epsilon:g}, noise {args.noise:g}) to {args.out}",
        flush=True,
    )
    count = 0

    def progress(episode) -> None:
        nonlocal count
        count += 1
        print(f"episode {count}: {len(episode)} steps, return {episode.episode_return:.2f}", flush=True)

    episodes = play_episodes(policy, params, environment, args.episodes, args.seed, perturb, on_episode=progress)
    environment.close()
    write_dataset(
        args.out,
        episodes,
        spec,
        metadata["environment_id"],
        {
            "acme_agent": metadata["agent"],
            "acme_snapshot": os.path.abspath(snapshot_directory),
            "acme_exploration": {"epsilon": args.epsilon, "noise": args.noise, "seed": args.seed},
        },
    )
    returns = [e.episode_return for e in episodes]
    print(
        f"Wrote {len(episodes)} episodes ({sum(len(e) for e in episodes)} steps, mean return "
        f"{sum(returns) / len(returns):.2f}) to {args.out}",
        flush=True,
    )
    return 0
