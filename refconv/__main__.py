"""``python -m refconv`` is the ``refconv`` command."""
import sys

from .cli import main

sys.exit(main())
