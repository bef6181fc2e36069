"""Things that stand where the robot stands: simulated plant, serial driver, protocol adapters; and
run_config, the whole run config (core's schema with the sections viz, drivers and planning own).
drivers builds on core, viz and planning and never imports hil (tests/test_architecture.py)."""
