"""Locate the LCM command-line tools (lcm-gen, lcm-logger, lcm-logplayer, ...)."""
import os
import shutil
import sys

import lcm


def lcm_tool(name):
    """Path of the LCM tool `name`, or None when it is not installed.

    Looks in the lcm wheel's own bin directory, then next to the running
    interpreter (a virtualenv's bin), then on PATH.
    """
    for directory in (getattr(lcm, "LCM_BIN_DIR", None), os.path.dirname(sys.executable)):
        if directory:
            path = os.path.join(directory, name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return os.path.realpath(path)
    return shutil.which(name)
