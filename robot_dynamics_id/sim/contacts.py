"""External loads on the simulated arm's links: a person pushing a link, obstacles in the arm's path.

Collisions for the collision observer (control/collision.py) to detect, on any link, not only at the
tool (an F/T sensor at the flange sees tool contacts only). Each load acts at a point fixed on one link
and is evaluated every physics substep by :class:`~robot_dynamics_id.sim.plant.SimulatedUR` from that
point's world position and velocity; its force enters the dynamics as Jᵀ F (the point's Jacobian).

* :class:`LinkPush` — a prescribed force (a hand pushing the link): raised-cosine rise to ``force_n``,
  hold, raised-cosine release; independent of the motion.
* :class:`SphereObstacle` — a rigid sphere fixed in the world that the link point (a ball of
  ``link_radius_m``, the link's local half-thickness) runs into: a Kelvin–Voigt contact,
  ``F = max(0, k δ + c δ̇) n`` along the outward normal n while the penetration δ > 0 — it pushes,
  never pulls; frictionless. Soft and hard presets: :data:`SOFT_OBSTACLE` (k = 10 N/mm, the effective
  spring constant ISO/TS 15066 Table A.2 gives for the abdomen, the softest body region) and
  :data:`HARD_OBSTACLE` (k = 500 N/mm, a rigid fixture behind the compliance of the arm's own
  structure). With the 0.5 ms physics substep the stiff contact stays stable: k h² / m ≈ 0.4 and
  c h / m ≈ 0.8 for a 0.3 kg effective wrist mass (the explicit force step needs both < 2).

Loads are plain data (``to_dict`` / :func:`loads_from_dicts`), so a list of them can be written to a
YAML file and given to the simulated robot of ur_interface (parameter ``sim_external_loads_file``).
Only the loads' own link points touch an obstacle: the scenario places the obstacle where that point
will pass (scenarios/collisions.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["HARD_OBSTACLE", "SOFT_OBSTACLE", "AppliedLoads", "ExternalLoad", "LinkPush", "ObstacleMaterial", "SphereObstacle",
           "load_loads_file", "loads_from_dicts"]


def _vector3(name: str, value) -> tuple[float, float, float]:
    v = np.asarray(value, float).ravel()
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be 3 finite numbers, got {value!r}")
    return (float(v[0]), float(v[1]), float(v[2]))


@dataclass(frozen=True)
class ObstacleMaterial:
    """Contact stiffness (N/m) and damping (N s/m) of an obstacle."""

    stiffness_n_per_m: float
    damping_n_s_per_m: float

    def __post_init__(self) -> None:
        if not self.stiffness_n_per_m > 0 or self.damping_n_s_per_m < 0:
            raise ValueError("obstacle stiffness must be > 0 N/m and damping >= 0 N s/m")


#: a soft obstacle: 10 N/mm (ISO/TS 15066 Table A.2, abdomen), lightly damped
SOFT_OBSTACLE = ObstacleMaterial(stiffness_n_per_m=1.0e4, damping_n_s_per_m=30.0)
#: a hard obstacle: 500 N/mm (a rigid fixture in series with the arm's structural compliance)
HARD_OBSTACLE = ObstacleMaterial(stiffness_n_per_m=5.0e5, damping_n_s_per_m=200.0)


class ExternalLoad:
    """A force at a point fixed on a link. Subclasses give :meth:`force_world_n`.

    ``link``: 1..n, the body moved by joint ``link`` (MuJoCo body ``link{i}``, pinocchio joint frame i);
    ``point_m``: the point in that frame, m.
    """

    link: int
    point_m: tuple[float, float, float]
    kind: str = "load"

    def _check_point(self) -> None:
        if int(self.link) < 1:
            raise ValueError(f"load link must be >= 1 (link i moves with joint i), got {self.link}")
        object.__setattr__(self, "link", int(self.link))
        object.__setattr__(self, "point_m", _vector3("load point_m", self.point_m))

    def force_world_n(self, time_s: float, position_world_m: np.ndarray, velocity_world_m_s: np.ndarray
                      ) -> np.ndarray:
        """The force (N, world axes) on the link at ``time_s`` with the point at the given position/velocity."""
        raise NotImplementedError

    def to_dict(self) -> dict:
        raise NotImplementedError


@dataclass(frozen=True)
class LinkPush(ExternalLoad):
    """A push on a link: 0 before ``start_s``, raised-cosine rise over ``rise_s`` to ``force_n`` (world
    axes), held ``hold_s``, released over ``rise_s``."""

    link: int
    point_m: tuple[float, float, float]
    force_n: tuple[float, float, float]
    start_s: float
    rise_s: float = 0.05
    hold_s: float = 1.0
    kind: str = "push"

    def __post_init__(self) -> None:
        self._check_point()
        object.__setattr__(self, "force_n", _vector3("push force_n", self.force_n))
        if not (math.isfinite(self.start_s) and self.rise_s >= 0 and self.hold_s >= 0):
            raise ValueError("push start_s must be finite, rise_s and hold_s >= 0")

    @property
    def end_s(self) -> float:
        return self.start_s + 2 * self.rise_s + self.hold_s

    def magnitude(self, time_s: float) -> float:
        """Fraction 0..1 of the peak force at ``time_s``."""
        t = time_s - self.start_s
        if t <= 0 or time_s >= self.end_s:
            return 0.0
        if t < self.rise_s:
            return 0.5 - 0.5 * math.cos(math.pi * t / self.rise_s)
        t -= self.rise_s + self.hold_s
        if t <= 0:
            return 1.0
        return 0.5 + 0.5 * math.cos(math.pi * t / self.rise_s)

    def force_world_n(self, time_s, position_world_m, velocity_world_m_s) -> np.ndarray:
        return np.asarray(self.force_n) * self.magnitude(time_s)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "link": self.link, "point_m": list(self.point_m), "force_n": list(self.force_n),
                "start_s": float(self.start_s), "rise_s": float(self.rise_s), "hold_s": float(self.hold_s)}


@dataclass(frozen=True)
class SphereObstacle(ExternalLoad):
    """A sphere fixed in the world (centre, radius) that the link point (a ball of ``link_radius_m``) hits."""

    link: int
    point_m: tuple[float, float, float]
    centre_m: tuple[float, float, float]
    radius_m: float
    material: ObstacleMaterial = SOFT_OBSTACLE
    link_radius_m: float = 0.04
    kind: str = "sphere_obstacle"

    def __post_init__(self) -> None:
        self._check_point()
        object.__setattr__(self, "centre_m", _vector3("obstacle centre_m", self.centre_m))
        if not self.radius_m > 0 or self.link_radius_m < 0:
            raise ValueError("obstacle radius must be > 0 m and link_radius_m >= 0")

    def force_world_n(self, time_s, position_world_m, velocity_world_m_s) -> np.ndarray:
        offset = np.asarray(position_world_m, float) - self.centre_m
        distance = float(np.linalg.norm(offset))
        depth = self.radius_m + self.link_radius_m - distance
        if depth <= 0.0 or distance == 0.0:
            return np.zeros(3)
        normal = offset / distance
        depth_rate = -float(normal @ np.asarray(velocity_world_m_s, float))
        magnitude = self.material.stiffness_n_per_m * depth + self.material.damping_n_s_per_m * depth_rate
        return normal * max(0.0, magnitude)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "link": self.link, "point_m": list(self.point_m), "centre_m": list(self.centre_m),
                "radius_m": float(self.radius_m), "link_radius_m": float(self.link_radius_m),
                "stiffness_n_per_m": float(self.material.stiffness_n_per_m),
                "damping_n_s_per_m": float(self.material.damping_n_s_per_m)}


def loads_from_dicts(items, *, source: str = "loads") -> list[ExternalLoad]:
    """Loads from their ``to_dict`` form (a YAML list); raises ValueError naming the entry and the problem."""
    if not isinstance(items, (list, tuple)):
        raise ValueError(f"{source}: expected a list of loads (kind: push | sphere_obstacle)")
    loads: list[ExternalLoad] = []
    for k, item in enumerate(items):
        try:
            if not isinstance(item, dict):
                raise ValueError("each load must be a mapping")
            kind = item.get("kind")
            if kind == "push":
                loads.append(LinkPush(link=item["link"], point_m=item["point_m"], force_n=item["force_n"],
                                      start_s=float(item["start_s"]), rise_s=float(item.get("rise_s", 0.05)),
                                      hold_s=float(item.get("hold_s", 1.0))))
            elif kind == "sphere_obstacle":
                material = ObstacleMaterial(float(item["stiffness_n_per_m"]), float(item.get("damping_n_s_per_m", 0.0)))
                loads.append(SphereObstacle(link=item["link"], point_m=item["point_m"], centre_m=item["centre_m"],
                                            radius_m=float(item["radius_m"]), material=material,
                                            link_radius_m=float(item.get("link_radius_m", 0.04))))
            else:
                raise ValueError(f"kind {kind!r} is unknown: use push or sphere_obstacle")
        except (KeyError, TypeError, ValueError) as exc:
            what = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
            raise ValueError(f"{source}: load {k}: {what}") from None
    return loads


def load_loads_file(path: str | Path) -> list[ExternalLoad]:
    """Loads from a YAML file holding a list of ``to_dict`` entries."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"external loads file {path} does not exist")
    try:
        items = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML: {exc}") from None
    return loads_from_dicts(items or [], source=str(path))


class AppliedLoads:
    """The plant's side of the loads: each substep, every load's force at its point and the joint torque Jᵀ F.

    ``arm``: the arm joints' slice of MuJoCo's dof vector (after a moving base's dofs)."""

    def __init__(self, mj_model, loads: tuple[ExternalLoad, ...], arm: slice) -> None:
        import mujoco

        n = arm.stop - arm.start
        for load in loads:
            if not 1 <= load.link <= n:
                raise ValueError(f"external load on link {load.link}: the arm has links 1..{n}")
        self._model = mj_model
        self.loads = tuple(loads)
        self._arm = arm
        self._bodies = [mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_BODY, f"link{load.link}") for load in loads]
        self._points = [np.asarray(load.point_m, float) for load in loads]
        self._jacp = np.zeros((3, mj_model.nv))
        #: per load: the force (N, world) of the latest substep, the largest magnitude over the current cycle
        self.force_n = np.zeros((len(loads), 3))
        self.peak_n = np.zeros(len(loads))

    def start_cycle(self) -> None:
        self.peak_n[:] = 0.0

    def joint_torque_nm(self, mj_data, time_s: float) -> np.ndarray:
        """Σ Jᵀ F over the loads at the data's current state (its kinematics are brought up to date here)."""
        import mujoco  # the simulator's own dependency; kept out of this module's import for config readers

        m, d = self._model, mj_data
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        total = np.zeros(self._arm.stop - self._arm.start)
        for k, (load, body, point_local) in enumerate(zip(self.loads, self._bodies, self._points)):
            point = d.xpos[body] + d.xmat[body].reshape(3, 3) @ point_local
            mujoco.mj_jac(m, d, self._jacp, None, point, body)
            force = load.force_world_n(time_s, point, self._jacp @ d.qvel)
            self.force_n[k] = force
            self.peak_n[k] = max(self.peak_n[k], float(np.linalg.norm(force)))
            total += self._jacp[:, self._arm].T @ force
        return total
