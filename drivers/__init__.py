"""drivers: what stands where the robot stands (the simulated plant, drivers.sim; the serial board and
servo buses, drivers.serial) and what the loop shares with them: drivers.core (config schema, clocks,
robot loading, signals, the shipped configs), drivers.viz (the viewer bridge), run_config (the whole
run config: core's schema with the sections drivers and viz own) and legged_contacts (a legged
config's feet). drivers builds on dynamics_cy (and its planning) and messages, and never imports hil
(tests/test_architecture.py)."""
