"""Package definition. Exact versions of the whole stack live in constraints.txt."""

from setuptools import find_packages, setup

CORE = [
    "numpy<2",
    "ml-dtypes<0.4",
    "jax[cpu]==0.4.34",
    "jaxlib==0.4.34",
    "dm-haiku==0.0.13",  # 0.0.14+ fails to import on jax 0.4.34
    "optax==0.2.5",
    "rlax==0.1.7",
    "chex==0.1.90",
    "distrax==0.1.5",
    "tensorflow-probability==0.23.0",  # 0.25 refuses to import next to TF 2.15
    "tensorflow-cpu==2.15.1",  # required by dm-reverb 0.14
    "dm-reverb==0.14.0",
    "dm-env==1.6",
    "dm-tree==0.1.10",
    "gymnasium==1.4.0",
    "bsuite==0.3.6",
    "dm-control==1.0.50",
    "mujoco==3.17.0",  # 3.3 and 4.0 fail when a suite task loads
    "ray[default]==2.60.0",
    "tqdm",
    "psutil",
    "matplotlib",
]

setup(
    name="acme-jax",
    version="0.1.0",
    description="Composable reinforcement-learning agents in JAX, in-process or distributed on Ray.",
    python_requires=">=3.11,<3.12",
    packages=find_packages(include=["acme*", "agents*", "launch*", "baselines*"]),
    package_data={"agents": ["*/README.md"], "baselines": ["results/*.json", "results/runs/*.json"]},
    install_requires=CORE,
    extras_require={
        "test": ["pytest", "pytest-timeout"],
        "cuda": ["jax[cuda12]==0.4.34"],
    },
    entry_points={"console_scripts": ["acme-baselines=baselines.cli:main"]},
)
