# cython: language_level=3
"""The joint table's type codes for Python (joints.py gives each joint class its code from here); the
table itself is inline in _joints.pxd."""
