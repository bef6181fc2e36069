"""Contact results on LCM as Drake publishes them (ContactResultsToLcmSystem → lcmt_contact_results_for_viz),
so Meldis and drake_visualizer draw the simulated robot's contact forces.

Per point contact: body1_name / body2_name are bodies A and B named "body(model instance index)",
e.g. "iiwa_link_7(2)" and "world(0)"; contact_point is p_WC, contact_force f_Bc_W (the force on
body B, so a body resting on the ground shows a downward force), normal nhat_BA_W (from B into A);
timestamps are simulated microseconds. No hydroelastic contacts.
"""
from __future__ import annotations

import numpy as np

from messages import lcmt_contact_results_for_viz, lcmt_point_pair_contact_info_for_viz


class ContactResultsPublisher:
    """Encodes the last recorded contacts of `contact` (a physics' contact: its contact_results() and
    body_names; allocates a message: meant for ~60 Hz). Counts the messages published, those with a
    contact, and the largest contact force |f| in them."""

    def __init__(self, contact, channel: str, prefix: str = ""):
        self.contact, self.channel, self.prefix = contact, channel, prefix   # prefix: on the body names
        self.published = self.with_contact = 0
        self.max_force = 0.0

    def message(self, utime: int, msg: lcmt_contact_results_for_viz | None = None) -> lcmt_contact_results_for_viz:
        """The contacts at `utime` µs, appended to `msg` if given (one message of several plants)."""
        results, names, prefix = self.contact.contact_results(), self.contact.body_names, self.prefix
        if msg is None:
            msg = lcmt_contact_results_for_viz()
            msg.timestamp = utime
        n = results.num_point_pair_contacts()
        for c in (results.point_pair_contact_info(i) for i in range(n)):
            info = lcmt_point_pair_contact_info_for_viz()
            info.timestamp = utime
            info.body1_name = prefix + names[int(c.bodyA_index())]
            info.body2_name = prefix + names[int(c.bodyB_index())]
            info.contact_point, info.contact_force = c.contact_point().tolist(), c.contact_force().tolist()
            info.normal = c.point_pair().nhat_BA_W.tolist()
            msg.point_pair_contact_info.append(info)
            self.max_force = max(self.max_force, float(np.linalg.norm(c.contact_force())))
        msg.num_point_pair_contacts = len(msg.point_pair_contact_info)
        self.with_contact += n > 0
        return msg

    def publish(self, lc, utime: int) -> None:
        lc.publish(self.channel, self.message(utime).encode())
        self.published += 1
