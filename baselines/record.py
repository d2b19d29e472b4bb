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
    record_episodes(snapshot_directory, args.episodes, args.out, args.seed, args.epsilon, args.noise)
    return 0


def record_episodes(
    snapshot_directory: str, episodes: int, out: str, seed: int = 0, epsilon: float = 0.0, noise: float = 0.0
) -> None:
    """Plays ``episodes`` episodes of the snapshot's greedy policy (``epsilon``-random discrete actions or Gaussian
    ``noise`` on continuous ones, in units of half the action's range) and writes them to ``out`` as a new Minari
    dataset; a directory that holds a dataset already is refused."""
    from acme import snapshots, specs
    from acme.datasets.minari_format import holds_dataset, write_dataset
    from acme.datasets.recording import explore, play_episodes
    from baselines.policy_export import load_policy

    if holds_dataset(out):
        raise ValueError(f"{out} already holds a dataset; record to a new directory (nothing is overwritten).")
    policy, environment, params = load_policy(snapshot_directory, seed=seed)
    _, metadata = snapshots.load_policy_snapshot(snapshot_directory)
    spec = specs.make_environment_spec(environment)
    perturb = explore(spec, epsilon=epsilon, noise=noise)
    print(
        f"Recording {episodes} episodes of {metadata['agent']} on {metadata['environment_id']} "
        f"(epsilon {epsilon:g}, noise {noise:g}) to {out}",
        flush=True,
    )
    count = 0

    def progress(episode) -> None:
        nonlocal count
        count += 1
        print(f"episode {count}: {len(episode)} steps, return {episode.episode_return:.2f}", flush=True)

    played = play_episodes(policy, params, environment, episodes, seed, perturb, on_episode=progress)
    environment.close()
    write_dataset(
        out,
        played,
        spec,
        metadata["environment_id"],
        {
            "acme_agent": metadata["agent"],
            "acme_snapshot": os.path.abspath(snapshot_directory),
            "acme_exploration": {"epsilon": epsilon, "noise": noise, "seed": seed},
        },
    )
    returns = [e.episode_return for e in played]
    print(
        f"Wrote {len(played)} episodes ({sum(len(e) for e in played)} steps, mean return "
        f"{sum(returns) / len(returns):.2f}) to {out}",
        flush=True,
    )
