"""hil: the real-time HIL loop, controllers, safety, telemetry and the `hil` command line."""
