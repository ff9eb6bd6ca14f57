#!/usr/bin/env python
"""Django's command-line utility for Mercury."""

import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mercury.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
