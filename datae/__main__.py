"""``python -m datae``: the ``datae`` command."""

import sys

from .cli import main

sys.exit(main())
