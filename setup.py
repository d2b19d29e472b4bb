"""Package definition.

Two stacks install from it (README, "Install"): the core (``pip install -e .``,
Python 3.11-3.13: current jax, numpy 2, no TensorFlow, no reverb) and the core
plus the ``reverb`` extra (Python 3.11 only: dm-reverb 0.14 pins TensorFlow 2.15
and numpy 1.x). The ranges here admit both; the exact, tested versions of each
stack live in its constraints file: ``constraints.txt`` (Python 3.11 + reverb)
and ``constraints-current.txt`` (the current core stack).
"""

from setuptools import find_packages, setup

# Pure-Python dm-control depends on labmaze, which has no wheel for Python 3.13 (and needs bazel to build).
_HAS_DM_CONTROL = 'python_version < "3.13"'

CORE = [
    "numpy>=1.26",
    "jax[cpu]>=0.4.34",
    "jaxlib>=0.4.34",
    "dm-haiku>=0.0.13",  # 0.0.14-0.0.16 fail to import on jax 0.4.34 (constraints.txt pins 0.0.13 there)
    "optax>=0.2.5",
    "rlax>=0.1.7",
    "chex>=0.1.90",
    "distrax>=0.1.5",  # its jax substrate of tensorflow-probability works without TensorFlow
    "dm-env>=1.6",
    "dm-tree>=0.1.10",
    "gymnasium>=1.4.0",
    "bsuite>=0.3.6",
    f"dm-control>=1.0.50; {_HAS_DM_CONTROL}",
    f"mujoco==3.17.0; {_HAS_DM_CONTROL}",  # 3.3 and 4.0 fail when a suite task loads
    "ray[default,tune]>=2.60.0",  # tune: python -m baselines sweep
    "optuna>=4.0",  # sweeps' --search optuna, through Ray Tune
    "tqdm",
    "psutil",
    "matplotlib",
    # The report's aggregate statistics (IQM, stratified bootstrap intervals, performance profiles). It needs arch
    # < 8, whose 7.x releases import under pandas 3 only through baselines/aggregate.py's workaround (_rliable).
    "rliable>=1.2.0",
    "tensorboardX>=2.6",  # TensorBoard event files without TensorFlow
    "pyyaml>=6",  # --config files and the effective config.yaml of every run
    "minari[hdf5]>=0.5.3",  # offline datasets, written and read locally (0.5.4 needs numpy 2: 3.11 pins 0.5.3)
    # The MinAtar games in JAX (jax:MinAtar-<Game>); pure Python, on jax 0.4.34 as on current jax. pgx-minatar
    # imports pgx without declaring it.
    "pgx>=2.6.0",
    "pgx-minatar>=0.5.1",
]

# Distributed replay over reverb, and --replay reverb. dm-reverb 0.14 is the last release:
# Python 3.11, TensorFlow 2.15, numpy 1.x. Install it with `-c constraints.txt`.
REVERB = [
    "dm-reverb==0.14.0",
    "tensorflow-cpu==2.15.1",
    "tensorflow-probability==0.23.0",  # 0.25 refuses to import once TensorFlow 2.15 is loaded
    "numpy<2",
]

# Atari games by id (atari:Pong): ale-py bundles the ROMs since 0.12.1 (0.12.0 shipped without them); frames are
# resized in numpy (to the byte as ale-py's vector environment resizes them). make install includes it.
ATARI = ["ale-py>=0.12.1"]

# The JAX environment libraries (gymnax:, brax:, playground:, jumanji:, craftax:, navix: ids; each imported only when
# used). gymnax 0.0.9: gymnax 1.0 pins jax < 0.12. playground is MuJoCo Playground (module mujoco_playground).
JAX_ENVS = ["gymnax==0.0.9", "brax>=0.14", "playground>=0.2", "jumanji>=1.1", "craftax>=1.6", "navix>=4.0"]

setup(
    name="acme-jax",
    version="0.1.0",
    description="Composable reinforcement-learning agents in JAX, in-process or distributed on Ray.",
    python_requires=">=3.11",
    packages=find_packages(include=["acme*", "agents*", "launch*", "baselines*"]),
    package_data={"agents": ["*/README.md"], "baselines": ["results/*.json", "results/runs/*.json"]},
    install_requires=CORE,
    extras_require={
        "reverb": REVERB,
        "atari": ATARI,
        "jax-envs": JAX_ENVS,
        # pytest 9.2 keeps a test's id where pytest-xdist 3.8 cannot suffix it, so `--dist loadgroup` stops grouping.
        "test": ["pytest<9.2", "pytest-timeout", "pytest-xdist", "ruff", "minatar"],
        "cuda": ["jax[cuda12]>=0.4.34"],
        # Experiment trackers (--logger wandb / mlflow): W&B, and MLflow's client with its SQLite store.
        "tracking": ["wandb>=0.20", "mlflow-skinny>=2.0", "sqlalchemy", "alembic"],  # wandb 0.20: reinit="create_new"
    },
    entry_points={"console_scripts": ["acme-baselines=baselines.cli:main"]},
)
