"""`python -m corral_cli …` is `corral …`."""

import sys

from corral_cli.main import main

sys.exit(main())
