"""``python -m advisor.engine`` entry point."""

from __future__ import annotations

import sys

from advisor.engine.tools.cli import main

if __name__ == "__main__":
    sys.exit(main())
