"""Example control laws for hilstack, named in a config as "hil_example_laws.laws:Name"."""
