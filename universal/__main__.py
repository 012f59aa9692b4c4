"""``python -m universal``: see :mod:`universal.cli`."""

import sys

from universal.cli import main

sys.exit(main())
