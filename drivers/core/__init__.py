"""drivers.core: the shared infrastructure the rest of drivers and hil use, and that uses none of
them in turn (it imports only dynamics_cy and messages):

- schema     YAML loading (duplicate keys, encodings, alias bombs refused) and config validation into
             dataclasses; ConfigError and LogError, the errors every command line reports with exit 2
- config     the run config's schema (robot, lcm, channels, loop, controller, trajectory, safety,
             telemetry) and its rules; channels_for, open_lcm (drivers.run_config adds the sections
             the packages above own)
- paths      the project's configs/ folder and the package map of `package://` URIs
- robot      the robot of a run config: its plant (load_robot, build_plant, parse_model)
- clock      the loop's clocks: real time, lockstep, status-driven
- signals    stop_on_signals: SIGINT / SIGTERM as a stop flag for a block, the handlers restored after
- _control   compiled small-vector helpers for the hot paths (allocation-free, GIL released)

Dependencies run one way (docs in DESIGN.md; tests/test_architecture.py asserts them):
dynamics_cy, messages -> core -> viz -> planning, drivers -> hil.
"""
