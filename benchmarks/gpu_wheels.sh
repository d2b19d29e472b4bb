#!/usr/bin/env bash
# The wheels `make bench-gpu` installs on a bare GPU machine, downloaded here into .whl/ (git-ignored), and
# PureJaxRL's source for the same-run peer in .whl/purejaxrl/ (its purejaxrl/ folder at the peer's commit).
#
# The GPU machine has Python 3.12 with jax for CUDA, flax, optax and chex (and what they need: absl-py, toolz,
# typing_extensions, msgpack, PyYAML, rich, etils, ml_dtypes, opt_einsum, numpy, scipy) and none of this library's
# other dependencies. CORE: what benchmarks/gpu.py imports on its paths (haiku, rlax, distrax and the
# tensorflow-probability jax substrate it uses, dm-env, gymnasium, pgx's MinAtar), with each Requires-Dist of
# theirs that the machine lacks. PEER: gymnax for PureJaxRL's PPO (benchmarks/purejaxrl_peer.py), with the
# matplotlib and seaborn (so pandas) that its environments import when gymnax is imported, and their
# Requires-Dist. Versions: constraints-current.txt's, else constraints-purejaxrl.txt's (gymnax, the plotting
# libraries). Binary wheels for CPython 3.12 on manylinux x86_64, no dependencies resolved; nothing is installed.
#
#   benchmarks/gpu_wheels.sh          # or: make gpu-wheels (about 45 MB; 10 MB with PEER=0)
#   PEER=0 benchmarks/gpu_wheels.sh   # without the peer's packages and source (gpu.py then records it absent)
#   PUREJAXRL_MIRROR=/path/to/purejaxrl.git benchmarks/gpu_wheels.sh   # a local git directory of PureJaxRL
# PureJaxRL's source comes from PUREJAXRL_MIRROR, else from .peers/purejaxrl-31756b1 (make install-purejaxrl),
# else from a clone of GitHub.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}
DEST=${DEST:-.whl}
PUREJAXRL_COMMIT=31756b197773a52db763fdbe6d635e4b46522a73 # as the Makefile's PUREJAXRL_COMMIT (31756b1)

CORE="dm-haiku jmp tabulate rlax distrax tfp-nightly six decorator cloudpickle gast dm-tree attrs wrapt dm-env
gymnasium Farama-Notifications pgx pgx-minatar svgwrite"
PEER_PACKAGES="gymnax matplotlib contourpy cycler fonttools kiwisolver packaging pillow pyparsing python-dateutil
seaborn pandas tzdata"

pinned() { # NAME -> NAME==VERSION from the first constraints file that names it (names compared as pip does)
    local key file line
    key=$(echo "$1" | tr 'A-Z_.' 'a-z--')
    for file in constraints-current.txt constraints-purejaxrl.txt; do
        line=$(sed 's/#.*//' "$file" | awk -F'==' -v k="$key" '{n=tolower($1); gsub(/[_.]/, "-", n)} n==k {print; exit}')
        [ -n "$line" ] && { echo "$line" | tr -d ' '; return; }
    done
    echo "$1 is pinned in neither constraints file" >&2
    return 1
}

packages=$CORE
[ "${PEER:-1}" = 0 ] || packages="$packages $PEER_PACKAGES"
mkdir -p "$DEST"
rm -f "$DEST"/*.whl # only this list's wheels (pip's cache keeps a second download short)
for name in $packages; do
    requirement=$(pinned "$name")
    "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d "$DEST" "$requirement"
done

if [ "${PEER:-1}" != 0 ]; then
    rm -rf "$DEST/purejaxrl" && mkdir -p "$DEST/purejaxrl"
    if [ -n "${PUREJAXRL_MIRROR:-}" ]; then
        git --git-dir="$PUREJAXRL_MIRROR" archive "$PUREJAXRL_COMMIT" purejaxrl | tar -x -C "$DEST/purejaxrl"
    elif [ -f ".peers/purejaxrl-${PUREJAXRL_COMMIT:0:7}/purejaxrl/ppo.py" ]; then
        cp -r ".peers/purejaxrl-${PUREJAXRL_COMMIT:0:7}/purejaxrl" "$DEST/purejaxrl/"
    else
        clone=$(mktemp -d)
        trap 'rm -rf "$clone"' EXIT
        git clone --quiet --bare https://github.com/luchris429/purejaxrl "$clone" || {
            echo "Could not clone PureJaxRL: give a local git directory of it as PUREJAXRL_MIRROR=/path" >&2
            exit 1
        }
        git --git-dir="$clone" archive "$PUREJAXRL_COMMIT" purejaxrl | tar -x -C "$DEST/purejaxrl"
    fi
    echo "$PUREJAXRL_COMMIT" > "$DEST/purejaxrl/COMMIT"
fi

echo "$DEST/: $(ls "$DEST"/*.whl | wc -l) wheels, $(du -sh "$DEST" | cut -f1) in all"
