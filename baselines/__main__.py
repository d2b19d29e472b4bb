"""``python -m baselines``."""

import sys

from baselines.cli import main

sys.exit(main())
