"""`python -m tfm.cli ...` is `tfm ...`."""

import sys

from tfm.cli.commands import main

sys.exit(main())
