"""drivers.viz: the LCM bridge to drake_visualizer / Meldis, Drake's viewer messages for a plant. It
sits above drivers.core (config schema) and below the rest of drivers and hil, which both publish to
a viewer; it imports only dynamics_cy, messages and drivers.core.

- load_robot_message(plant)          lcmt_viewer_load_robot, as Drake's DrakeVisualizer builds it
- DrawPublisher(plant, lc, channel)  lcmt_viewer_draw from q, preallocated
- ViewerBridge(plant, lc, channels, config)
                                     both, rate-limited, for a control loop's tick(now_ns, q, utime)
- VizConfig, load_viz_config(data)  the `viz:` config section and its validation
- format_counters(bridge.summary())  the bridge's counters as one line
- drivers.viz.standalone             a status channel -> viewer messages (`hil viz CONFIG`)
See docs/viz.md.
"""
from .bridge import DRAKE_VIEWER_STATUS, VIEWER_STARTED, ViewerBridge, VizConfig, format_counters, load_viz_config
from .draw import DrawPublisher
from .load import DEFAULT_COLOR, SOURCE_NAME, draw_bodies, geometry_data, link_name, load_robot_message

__all__ = ["DEFAULT_COLOR", "DRAKE_VIEWER_STATUS", "SOURCE_NAME", "VIEWER_STARTED", "DrawPublisher",
           "ViewerBridge", "VizConfig", "draw_bodies", "format_counters", "geometry_data", "link_name",
           "load_robot_message", "load_viz_config"]
