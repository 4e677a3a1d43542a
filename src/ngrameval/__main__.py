"""``python -m ngrameval``."""

import sys

from ngrameval.cli import main

sys.exit(main())
