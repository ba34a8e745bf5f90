"""``python -m dperm.cli``: the ``dperm`` command."""

import sys

from ._parser import main

sys.exit(main())
