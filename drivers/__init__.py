"""Things that stand where the robot stands: simulated plant, serial driver, protocol adapters."""
