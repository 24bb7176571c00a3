"""UR family descriptions (DH, inertial priors, limits), URDF generation and pinocchio models."""

from .description import JOINT_NAMES, ROBOT_NAMES, RobotDescription, get_robot
from .kinematics import dh_forward_kinematics, dh_link_frames, dh_transform
from .model import RobotModel, load_robot, model_from_description
from .urdf import LINK_NAMES, urdf_from_description

__all__ = [
    "JOINT_NAMES", "LINK_NAMES", "ROBOT_NAMES", "RobotDescription", "RobotModel",
    "dh_forward_kinematics", "dh_link_frames", "dh_transform", "get_robot", "load_robot",
    "model_from_description", "urdf_from_description",
]
