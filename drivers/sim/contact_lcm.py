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

from .contact import ContactModel


class ContactResultsPublisher:
    """Encodes a ContactModel's last recorded contacts (allocates a message: meant for ~60 Hz).
    Counts the messages published, those with a contact, and the largest contact force |f| in them."""

    def __init__(self, contact: ContactModel, channel: str):
        self.contact, self.channel = contact, channel
        self.published = self.with_contact = 0
        self.max_force = 0.0

    def message(self, utime: int) -> lcmt_contact_results_for_viz:
        c, names = self.contact.point_contact, self.contact.body_names
        msg = lcmt_contact_results_for_viz()
        msg.timestamp = utime
        for i in range(c.num_contacts):
            info = lcmt_point_pair_contact_info_for_viz()
            info.timestamp = utime
            info.body1_name, info.body2_name = names[c.body_A[i]], names[c.body_B[i]]
            info.contact_point, info.contact_force, info.normal = (c.p_WC[i].tolist(), c.f_Bc_W[i].tolist(),
                                                                   c.nhat_BA_W[i].tolist())
            msg.point_pair_contact_info.append(info)
        msg.num_point_pair_contacts = c.num_contacts
        if c.num_contacts:
            self.with_contact += 1
            self.max_force = max(self.max_force, float(np.linalg.norm(c.f_Bc_W[:c.num_contacts], axis=1).max()))
        return msg

    def publish(self, lc, utime: int) -> None:
        lc.publish(self.channel, self.message(utime).encode())
        self.published += 1
