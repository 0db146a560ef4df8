"""``python -m companion.sim.render sample|time ...``: example frames and timing."""

import sys

from companion.sim.render.cli import main

sys.exit(main(sys.argv[1:]))
