"""hil: the top of the stack. It owns the control loops and their lifecycle (loop, legged_loop,
lifecycle), the controllers (controllers, legged), trajectories, safety, telemetry and tick
statistics (telemetry, sketch), the real-time process settings (process), the lockstep wiring of a
loop and a simulated robot (lockstep), regression scenarios (scenario, legged_scenario, regress),
campaigns (campaign*), run logs, replay, report and MCAP export (runlog, replay, report, legged_log,
mcap_export), and the `hil` command line (cli, cli_table). It may import every other package of
the project; none imports it (DESIGN.md, tests/test_architecture.py)."""
