"""Channel names: Drake's defaults, per-robot configuration."""
import pytest

from messages import channels
from messages.channels import Channels


def test_defaults_are_drakes_names():
    assert channels.DEFAULT_LCM_URL == "udpm://239.255.76.67:7667?ttl=0"
    default = Channels()
    assert (default.status, default.command) == ("IIWA_STATUS", "IIWA_COMMAND")
    assert default.viewer_load_robot == "DRAKE_VIEWER_LOAD_ROBOT"
    assert default.viewer_draw == "DRAKE_VIEWER_DRAW"
    assert default.contact_results == "CONTACT_RESULTS"
    assert Channels.for_robot("iiwa") == default
    panda = Channels.for_robot("panda")
    assert (panda.status, panda.command) == (channels.PANDA_STATUS, channels.PANDA_COMMAND)


def test_prefix_and_overrides():
    left = Channels.for_robot("iiwa", prefix="LEFT_", viewer_draw="DRAKE_VIEWER_DRAW_ILLUSTRATION")
    assert (left.status, left.command, left.telemetry) == (
        "LEFT_IIWA_STATUS", "LEFT_IIWA_COMMAND", "LEFT_HIL_TELEMETRY")
    assert left.safety == "LEFT_HIL_SAFETY" and left.plan == "LEFT_HIL_PLAN"
    assert left.driver_health == "LEFT_DRIVER_HEALTH" and left.run_info == "LEFT_HIL_RUN_INFO"
    assert left.estop == "HIL_ESTOP"  # cell-wide
    assert left.viewer_draw == "DRAKE_VIEWER_DRAW_ILLUSTRATION"
    assert left.contact_results == "CONTACT_RESULTS"


def test_bad_configuration_names_the_key():
    with pytest.raises(ValueError, match="statuss"):
        Channels.for_robot("iiwa", statuss="X")
    with pytest.raises(ValueError, match="ur5"):
        Channels.for_robot("ur5")


def test_a_private_url_is_below_the_ephemeral_ports():
    """Random ports for concurrent runs stay out of ip_local_port_range: a socket the kernel gave such
    a port without SO_REUSEADDR made lcm-logger's bind fail ("Address already in use") in a suite run."""
    import re
    from pathlib import Path

    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = {int(re.fullmatch(r"udpm://239\.255\.76\.67:(\d+)\?ttl=0", channels.private_lcm_url()).group(1))
             for _ in range(200)}
    assert all(10000 <= p < low for p in ports) and len(ports) > 100
