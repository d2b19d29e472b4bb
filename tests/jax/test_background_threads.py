"""The library's background threads end when closed: a daemon thread still inside a jax call when the interpreter
exits aborts the whole process ("terminate called after throwing an instance of ''", exit status -6) after the
run's work is done, as ``examples/distributed_ray.py --launcher threads`` once did."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Each background thread is kept busy in jax calls (a jitted product fetched to the host), closed, and the process
# exits at once: with a thread left in such a call the exit aborts on almost every run.
_SCRIPT = """
import sys, threading, time
import jax, jax.numpy as jnp
from acme.jax.polling_source import PollingVariableSource
from acme.jax.prefetch import PrefetchIterator

x = jnp.ones((600, 600))
product = jax.jit(lambda a: a @ a)


class Source:
    def get_variables(self, names):
        return [jax.device_get(product(x)) for _ in names]


def batches():
    while True:
        yield product(x)


kind = sys.argv[1]
if kind == "poller":
    thread = PollingVariableSource(Source(), ["policy"], interval=1e-4)
    thread.get_variables(["policy"])
else:
    thread = PrefetchIterator(batches(), buffer_size=1, transform=jax.device_get)
    next(thread)
time.sleep(0.2)
thread.close()
print("closed", [t.name for t in threading.enumerate() if t is not threading.main_thread()])
"""


@pytest.mark.parametrize("kind", ["poller", "prefetch"])
def test_a_closed_background_thread_has_ended_and_the_process_exits_cleanly(kind):
    results = [
        subprocess.run([sys.executable, "-c", _SCRIPT, kind], cwd=REPO, capture_output=True, text=True, timeout=120)
        for _ in range(3)
    ]
    for result in results:
        assert result.returncode == 0 and "closed []" in result.stdout, (result.returncode, result.stderr[-2000:])
