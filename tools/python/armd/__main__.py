"""``python3 -m armd``: see armd.cli."""
import sys

from armd.cli import main

sys.exit(main())
