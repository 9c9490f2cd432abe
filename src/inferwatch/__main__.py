"""``python -m inferwatch`` runs the command line."""

import sys

from inferwatch.cli import main

sys.exit(main())
