"""`python -m ledgerlm COMMAND …` is the `ledgerlm` command (ledgerlm/cli.py dispatches to the command's module)."""
import sys

from ledgerlm.cli import main

sys.exit(main())
