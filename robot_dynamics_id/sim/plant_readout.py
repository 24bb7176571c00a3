"""Noise-free readings of the simulated UR's MuJoCo state: ground truth for tests and scoring.

The servo's state and references, the flange pose and velocity, the raw and compensated F/T
sensor wrench, the total contact force on the tool and the tool tip's position: what a
scenario or a test compares the controller's view against (``RobotState`` carries only the
noisy, RTDE-like measurements).
"""

from __future__ import annotations

import mujoco
import numpy as np

__all__ = ["PlantReadout"]


class PlantReadout:
    """The ground-truth readings of :class:`~robot_dynamics_id.sim.plant.SimulatedUR` (a mixin on its state).

    Reads the plant's MuJoCo model and data (``_mj_model``, ``_mj_data``, ``_scratch_data``), the
    ids it resolved at construction (``_arm``, ``_base_body``, ``_flange_site``, ``_ft_force_adr``,
    ``_ft_torque_adr``, ``_tool_tip_geom``), the end effector's static load (``_ee_mass_kg``,
    ``_ee_com_tool0_m``, ``_gravity``) and the servo's state (``_mode``, ``_motor_torque``,
    ``_friction_applied``, ``_q_ref``, ``_qd_ref``, ``_base_motion``, ``_base_origin``).
    """

    # ---- -------------------------------------------------------
    @property
    def mode(self) -> str:
        """'velocity' (speedJ servo) or 'torque' (direct_torque)."""
        return self._mode

    @property
    def motor_torque_nm(self) -> np.ndarray:
        """The drive torque applied during the last physics substep (true, noise-free), Nm."""
        return self._motor_torque.copy()

    @property
    def friction_torque_nm(self) -> np.ndarray:
        """Friction torque that acted during the last physics substep (opposing motion), Nm."""
        return self._friction_applied.copy()

    @property
    def q_true_rad(self) -> np.ndarray:
        return self._mj_data.qpos[self._arm].copy()

    @property
    def qd_true_rad_s(self) -> np.ndarray:
        return self._mj_data.qvel[self._arm].copy()

    @property
    def reference_q_rad(self) -> np.ndarray:
        """The servo's integrated position reference."""
        return self._q_ref.copy()

    @property
    def reference_qd_rad_s(self) -> np.ndarray:
        """The servo's velocity reference (ramping towards the speedJ command)."""
        return self._qd_ref.copy()

    @property
    def base_position_world_m(self) -> np.ndarray:
        """Where the (possibly moving) base currently is in the world, m."""
        if self._base_motion is None:
            return self._base_origin.copy()
        return self._mj_data.qpos[:3].copy()

    def flange_pose_base(self) -> np.ndarray:
        """Pose of the flange (tool0) in the base frame, 4×4 (true, noise-free)."""
        d = self._mj_data
        kinematics = self._scratch_data  # keep the main data's sensor snapshot intact
        kinematics.qpos[:] = d.qpos
        mujoco.mj_kinematics(self._mj_model, kinematics)
        d = kinematics
        pose = np.eye(4)
        pose[:3, :3] = d.site_xmat[self._flange_site].reshape(3, 3)
        pose[:3, 3] = d.site_xpos[self._flange_site] - d.xpos[self._base_body]
        return pose

    def ft_sensor_wrench_flange(self) -> np.ndarray:
        """Raw F/T sensor: wrench the end effector (payload + tool) exerts on the flange,
        [F, M about the flange origin] in tool0 axes, N and Nm (true, noise-free, uncompensated)."""
        s = self._mj_data.sensordata
        # MuJoCo's force/torque sensors report the force the parent (flange) exerts on the child
        # (end effector), in the site frame; the sensor reads the reaction.
        force = -np.array(s[self._ft_force_adr:self._ft_force_adr + 3])
        torque = -np.array(s[self._ft_torque_adr:self._ft_torque_adr + 3])
        return np.concatenate([force, torque])

    def tcp_wrench_base_true(self) -> np.ndarray:
        """Noise-free ``tcp_wrench_base``: environment wrench on the robot through the tool
        (sensor minus the payload+tool static weight), base axes, moment about the flange."""
        rotation = self._mj_data.site_xmat[self._flange_site].reshape(3, 3)
        raw = self.ft_sensor_wrench_flange()
        force = rotation @ raw[:3]
        torque = rotation @ raw[3:]
        if self._ee_mass_kg > 0:
            weight = self._ee_mass_kg * self._gravity
            lever = rotation @ self._ee_com_tool0_m
            force = force - weight
            torque = torque - np.cross(lever, weight)
        return np.concatenate([force, torque])

    def contact_force_world(self) -> np.ndarray:
        """True total contact force the surface exerts on the tool, world frame, N (for scoring)."""
        m, d = self._mj_model, self._mj_data
        total = np.zeros(3)
        if self._tool_tip_geom < 0:
            return total
        f6 = np.zeros(6)
        for i in range(d.ncon):
            con = d.contact[i]
            geoms = (con.geom1, con.geom2)
            if self._tool_tip_geom not in geoms:
                continue
            mujoco.mj_contactForce(m, d, i, f6)
            force_world = con.frame.reshape(3, 3).T @ f6[:3]
            # mj_contactForce gives the force geom1 exerts on geom2... along the normal from geom1 to geom2
            total += force_world if con.geom2 == self._tool_tip_geom else -force_world
        return total

    def flange_velocity_world(self) -> np.ndarray:
        """Linear velocity of the flange origin in the world (includes the base's motion), m/s."""
        velocity = np.zeros(6)
        mujoco.mj_objectVelocity(self._mj_model, self._mj_data, mujoco.mjtObj.mjOBJ_SITE, self._flange_site,
                                 velocity, 0)
        return velocity[3:].copy()

    def tool_tip_position_world(self) -> np.ndarray:
        """Centre of the tool's ball tip in the world, m (raises if the scene has no tool)."""
        if self._tool_tip_geom < 0:
            raise ValueError("this simulator has no tool: pass scene=Scene(tool=Tool(...))")
        return self._mj_data.geom_xpos[self._tool_tip_geom].copy()
