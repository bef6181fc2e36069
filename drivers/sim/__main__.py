"""python -m drivers.sim CONFIG [--duration S] [--lcm-url URL]"""
import sys

from .realtime import main

sys.exit(main())
