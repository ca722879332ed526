"""``python -m groupcf``: see :mod:`groupcf.cli`."""
import sys

from .cli import main

sys.exit(main())
