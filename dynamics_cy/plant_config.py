"""MultibodyPlant's settings and elements beside the tree: the contact model and discrete approximation,
collision filters, per-instance gravity, force elements, floating-base bodies and the element queries
(has_joint, has_joint_actuator). A mixin of MultibodyPlant (plant.py); pydrake's names and semantics.

The contact settings are stored and reported as Drake's; the simulated plant (drivers.sim) computes
point contact whatever they say (docs/dynamics.md, "Additions and differences").
"""
from __future__ import annotations

import os
import textwrap
import warnings

from .enums import DrakeIntEnum
from .errors import HilstackError
from .geometry import HydroelasticContactRepresentation
from .spatial_math import RigidTransform
from .tree import ForceElement, ForceElementIndex, RigidBody, UniformGravityFieldElement

_REMOVAL = "This will be removed from Drake on or after 2026-06-01."


class DrakeDeprecationWarning(HilstackError, DeprecationWarning):
    """A deprecated pydrake name used (pydrake.common.deprecation.DrakeDeprecationWarning's twin, which
    dynamics_cy cannot derive from without importing pydrake). Shown by default, once per call site (a
    plain DeprecationWarning is hidden outside __main__; pydrake shows its own once); an error when
    _DRAKE_DEPRECATION_IS_ERROR=1, as pydrake's."""


warnings.simplefilter("error" if os.environ.get("_DRAKE_DEPRECATION_IS_ERROR") == "1" else "default",
                      DrakeDeprecationWarning)


def deprecated(new: str, stacklevel: int = 3) -> None:
    """Drake's deprecation of a method in favour of ``new``: pydrake's warning text, a DrakeDeprecationWarning."""
    text = textwrap.fill(f"Use {new}() instead. {_REMOVAL}", width=70, initial_indent="    ",
                         subsequent_indent="    ")
    warnings.warn(f"(Deprecated.)\n\nDeprecated:\n{text}", DrakeDeprecationWarning, stacklevel=stacklevel)


class ContactModel(DrakeIntEnum):
    kHydroelastic = 0
    kPoint = 1
    kHydroelasticWithFallback = 2
    kHydroelasticsOnly = 0          # Drake's legacy aliases
    kPointContactOnly = 1


class DiscreteContactApproximation(DrakeIntEnum):
    kTamsi = 0
    kSap = 1
    kSimilar = 2
    kLagged = 3


class DiscreteContactSolver(DrakeIntEnum):
    kTamsi = 0
    kSap = 1


class PlantConfig:
    """Contact settings, gravity per model instance, force elements and floating bases of MultibodyPlant."""

    def _init_config(self) -> None:
        self._contact_model = ContactModel.kHydroelasticWithFallback
        self._discrete_approximation = DiscreteContactApproximation.kLagged
        self._sap_near_rigid_threshold = 1.0
        self._surface_representation = self.GetDefaultContactSurfaceRepresentation(self._time_step)
        self._adjacent_filters = True
        self._force_elements: list[ForceElement] = []
        self._add_force_element(self._gravity)

    # ------------------------------------------------------------------------------------------
    # Contact settings (stored; drivers.sim computes point contact)
    # ------------------------------------------------------------------------------------------
    def set_contact_model(self, model: ContactModel) -> None:
        self._throw_if_finalized("set_contact_model")
        self._contact_model = model

    def get_contact_model(self) -> ContactModel:
        return self._contact_model

    def set_discrete_contact_approximation(self, approximation: DiscreteContactApproximation) -> None:
        self._throw_if_finalized("set_discrete_contact_approximation")
        if not self.is_discrete():
            raise RuntimeError("set_discrete_contact_approximation(): the plant must be discrete "
                               "(time_step > 0)")
        if int(approximation) == DiscreteContactApproximation.kTamsi and self.num_constraints() > 0:
            raise RuntimeError(f"You selected TAMSI as the contact approximation, but you have constraints registered "
                               f"with this model (num_constraints() == {self.num_constraints()}). TAMSI does not "
                               "support constraints.")
        self._discrete_approximation = approximation

    def get_discrete_contact_approximation(self) -> DiscreteContactApproximation:
        return self._discrete_approximation

    def get_discrete_contact_solver(self) -> DiscreteContactSolver:
        """kTamsi for the TAMSI approximation, kSap for the others (kSap, kSimilar, kLagged), as in Drake."""
        return DiscreteContactSolver.kTamsi if int(self._discrete_approximation) == 0 else DiscreteContactSolver.kSap

    def set_sap_near_rigid_threshold(self, near_rigid_threshold: float = 1.0) -> None:
        self._throw_if_finalized("set_sap_near_rigid_threshold")
        if not near_rigid_threshold >= 0:
            raise ValueError(f"set_sap_near_rigid_threshold(): the threshold must be >= 0, got {near_rigid_threshold}")
        self._sap_near_rigid_threshold = float(near_rigid_threshold)

    def get_sap_near_rigid_threshold(self) -> float:
        return self._sap_near_rigid_threshold

    @staticmethod
    def GetDefaultContactSurfaceRepresentation(time_step: float) -> HydroelasticContactRepresentation:
        """kPolygon for a discrete plant, kTriangle for a continuous one, as in Drake."""
        return HydroelasticContactRepresentation.kPolygon if time_step > 0 else \
            HydroelasticContactRepresentation.kTriangle

    def set_contact_surface_representation(self, surface_representation) -> None:
        self._throw_if_finalized("set_contact_surface_representation")
        self._surface_representation = surface_representation

    def get_contact_surface_representation(self):
        return self._surface_representation

    def set_adjacent_bodies_collision_filters(self, value: bool) -> None:
        self._throw_if_finalized("set_adjacent_bodies_collision_filters")
        self._adjacent_filters = bool(value)

    def get_adjacent_bodies_collision_filters(self) -> bool:
        return self._adjacent_filters

    # ------------------------------------------------------------------------------------------
    # Gravity per model instance
    # ------------------------------------------------------------------------------------------
    def is_gravity_enabled(self, model_instance) -> bool:
        if not 0 <= int(model_instance) < len(self._instance_names):
            raise RuntimeError("Model instance index is invalid.")
        return True

    def set_gravity_enabled(self, model_instance, is_enabled: bool) -> None:
        """Enabling is accepted; disabling one model instance is not supported here: the compiled
        algorithms apply gravity as the base's acceleration, to every body alike."""
        self._throw_if_finalized("set_gravity_enabled")
        self.is_gravity_enabled(model_instance)
        if not is_enabled:
            raise NotImplementedError(
                f"set_gravity_enabled(): disabling gravity for model instance "
                f"'{self._instance_names[int(model_instance)]}' is not supported by dynamics_cy (gravity acts "
                "on the whole plant); set the gravity vector to zero instead")

    # ------------------------------------------------------------------------------------------
    # Force elements
    # ------------------------------------------------------------------------------------------
    def _add_force_element(self, element: ForceElement) -> ForceElement:
        element._index, element._plant = ForceElementIndex(len(self._force_elements)), self
        self._force_elements.append(element)
        return element

    def AddForceElement(self, force_element: ForceElement) -> ForceElement:
        self._throw_if_finalized("AddForceElement")
        if isinstance(force_element, UniformGravityFieldElement):
            raise RuntimeError("This model already contains a gravity field element. Only one gravity field "
                               "element is allowed per model.")
        if not isinstance(force_element, ForceElement):
            raise TypeError(f"AddForceElement takes a ForceElement, got {type(force_element).__name__}")
        if force_element._plant is not None:
            raise RuntimeError("this force element already belongs to a plant")
        force_element._check_plant(self)
        return self._add_force_element(force_element)

    def num_force_elements(self) -> int:
        return len(self._force_elements)

    def get_force_element(self, force_element_index) -> ForceElement:
        return self._get(self._force_elements, force_element_index, "ForceElementIndex")

    # ------------------------------------------------------------------------------------------
    # Element queries
    # ------------------------------------------------------------------------------------------
    def has_joint(self, joint_index) -> bool:
        """True iff a joint with this index was added and not removed."""
        i = int(joint_index)
        return 0 <= i < len(self._joint_slots) and self._joint_slots[i] is not None

    def has_joint_actuator(self, actuator_index) -> bool:
        i = int(actuator_index)
        return 0 <= i < len(self._actuator_slots) and self._actuator_slots[i] is not None

    def RemoveJoint(self, joint) -> None:
        """Removes a joint (before Finalize) whose actuators were removed first. Its index is not reused:
        has_joint() is False for it and GetJointIndices() skips it, as in Drake."""
        if joint._plant is not self:
            raise RuntimeError("This multibody element does not belong to the supplied MultibodyTree.")
        if self.num_constraints() > 0:
            raise RuntimeError(f"RemoveJoint: This plant has {self.num_constraints()} user-added constraints. This "
                               f"plant must have 0 user-added constraints in order to remove joint with index "
                               f"{int(joint.index())}.")
        dependents = [a for a in self._actuators if a.joint() is joint]
        if dependents:
            names = ", ".join(f"JointActuator(name: {a.name()}, index: {int(a.index())})" for a in dependents)
            raise RuntimeError(f"RemoveJoint: joint with index {int(joint.index())} has the following dependent "
                               f"model elements which must be removed prior to joint removal: [{names}].")
        self._throw_if_finalized("RemoveJoint")
        self._joints.remove(joint)
        self._joint_slots[int(joint.index())] = None
        joint._plant = None

    def RemoveJointActuator(self, actuator) -> None:
        """Removes an actuator (before Finalize); its index is not reused, as in Drake."""
        if actuator._plant is not self:
            raise RuntimeError("This multibody element does not belong to the supplied MultibodyTree.")
        self._throw_if_finalized("RemoveJointActuator")
        self._actuators.remove(actuator)
        self._actuator_slots[int(actuator.index())] = None
        actuator._plant = None

    # ------------------------------------------------------------------------------------------
    # Floating-base bodies
    # ------------------------------------------------------------------------------------------
    def _floating_base_bodies_of(self, model_instance) -> list[RigidBody]:
        mi = self._check_instance(model_instance)
        return [b for b in self._bodies[1:] if b.model_instance() == mi and b.is_floating_base_body()]

    def HasUniqueFloatingBaseBody(self, model_instance) -> bool:
        self._throw_if_not_finalized("HasUniqueFloatingBaseBody")
        return len(self._floating_base_bodies_of(model_instance)) == 1

    def GetUniqueFloatingBaseBodyOrThrow(self, model_instance) -> RigidBody:
        self._throw_if_not_finalized("GetUniqueFloatingBaseBodyOrThrow")
        found = self._floating_base_bodies_of(model_instance)
        if len(found) != 1:
            raise RuntimeError(f"Model {self._instance_names[int(model_instance)]} does not have a unique base body.")
        return found[0]

    def HasUniqueFreeBaseBody(self, model_instance) -> bool:
        deprecated("HasUniqueFloatingBaseBody")
        return self.HasUniqueFloatingBaseBody(model_instance)

    def GetUniqueFreeBaseBodyOrThrow(self, model_instance) -> RigidBody:
        deprecated("GetUniqueFloatingBaseBodyOrThrow")
        return self.GetUniqueFloatingBaseBodyOrThrow(model_instance)

    def SetDefaultFloatingBaseBodyPose(self, body: RigidBody, X_WB: RigidTransform) -> None:
        """The pose a floating base body starts at in new contexts (before or after Finalize). Stored for
        any body, as Drake does; it takes effect when the body is a floating base."""
        X_WB = RigidTransform(X_WB)
        self._default_free_body_poses[int(body.index())] = X_WB
        if self._finalized and body.is_floating_base_body():
            body.inboard_joint().SetDefaultPose(X_WB)

    def GetDefaultFloatingBaseBodyPose(self, body: RigidBody) -> RigidTransform:
        """The default pose of a floating base body; the stored one (identity if none) for another body."""
        if self._finalized and body.is_floating_base_body():
            return body.inboard_joint().GetDefaultPose()
        return RigidTransform(self._default_free_body_poses.get(int(body.index()), RigidTransform()))

    def SetDefaultFreeBodyPose(self, body: RigidBody, X_PB: RigidTransform = None, X_WB: RigidTransform = None) -> None:
        deprecated("SetDefaultFloatingBaseBodyPose")
        self.SetDefaultFloatingBaseBodyPose(body, X_PB if X_WB is None else X_WB)

    def GetDefaultFreeBodyPose(self, body: RigidBody) -> RigidTransform:
        deprecated("GetDefaultFloatingBaseBodyPose")
        return self.GetDefaultFloatingBaseBodyPose(body)
