import sys

from langbot_plugin.cli import main

sys.exit(main())
