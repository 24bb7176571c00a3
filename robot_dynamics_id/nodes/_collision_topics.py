"""The collision observer's topics, the same whichever node runs it (ur_interface in its loop, collision_monitor):

  /collision_monitor/external_torque  sensor_msgs/JointState  effort = estimated external joint torque r, Nm
  /collision_monitor/residual         sensor_msgs/JointState  effort = r / threshold per joint (|value| >= 1:
                                                               collision), position = the thresholds in use, Nm
  /collision_monitor/collision        std_msgs/String, JSON: time_s (robot clock), joint, joint_name, ratio,
                                                               external_torque_nm, threshold_nm, joints_over,
                                                               contact_link_at_least, model (reliable, kept for
                                                               late subscribers: transient local, depth 20)

Stamps are the robot clock plus the offset of the state topics, so they line up with /joint_states.
Samples are queued by the robot loop (never blocking it) and published by a thread of their own.
"""

from __future__ import annotations

import collections
import json
import threading
import time
from array import array

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String

__all__ = ["COLLISION_EVENT_QOS", "TOPIC_NAMESPACE", "CollisionTopics", "in_loop_collision_monitor"]

TOPIC_NAMESPACE = "/collision_monitor"
COLLISION_EVENT_QOS = QoSProfile(depth=20, reliability=ReliabilityPolicy.RELIABLE,
                                 durability=DurabilityPolicy.TRANSIENT_LOCAL)
_STREAM_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)


class CollisionTopics:
    """Publishes the observer's residual for every sample and each collision (any thread → a publisher thread).

    ``stamp_offset``: a callable giving the offset (s) from the robot clock to the message stamps (the state
    topics' offset; None until known: then fixed at the first sample from the wall clock).
    """

    def __init__(self, node: Node, joint_names, *, model_label: str, stamp_offset=None) -> None:
        self._node = node
        self._names = list(joint_names)
        self._label = model_label
        self._stamp_offset = stamp_offset
        self._offset_s: float | None = None
        self._torque_pub = node.create_publisher(JointState, TOPIC_NAMESPACE + "/external_torque", _STREAM_QOS)
        self._residual_pub = node.create_publisher(JointState, TOPIC_NAMESPACE + "/residual", _STREAM_QOS)
        self._event_pub = node.create_publisher(String, TOPIC_NAMESPACE + "/collision", COLLISION_EVENT_QOS)
        self._queue: collections.deque = collections.deque(maxlen=20_000)
        self._wake = threading.Event()
        self._running = True
        self._torque_msg, self._residual_msg = JointState(), JointState()
        self._torque_msg.name = self._names
        self._residual_msg.name = self._names
        self._thread = threading.Thread(target=self._publish, name="collision_publisher", daemon=True)
        self._thread.start()

    # ---- robot loop (or subscription) thread: never blocks --------------------------------------------------
    def on_sample(self, time_s: float, external_torque_nm, threshold_nm) -> None:
        self._queue.append((float(time_s), array("d", external_torque_nm), array("d", threshold_nm)))
        self._wake.set()

    def on_collision(self, event) -> None:
        self._queue.append(event)
        self._wake.set()

    @property
    def event_publisher(self):
        """The /collision_monitor/collision publisher (a node flushes it at shutdown: the report must arrive)."""
        return self._event_pub

    def close(self, drain_timeout_s: float = 1.0) -> None:
        deadline = time.monotonic() + drain_timeout_s
        while self._queue and time.monotonic() < deadline:
            time.sleep(0.01)
        self._running = False
        self._wake.set()
        self._thread.join(1.0)

    # ---- publisher thread ----------------------------------------------------------------------------------
    def _stamp(self, header, time_s: float) -> None:
        if self._offset_s is None:
            known = None if self._stamp_offset is None else self._stamp_offset()
            self._offset_s = known if known is not None else time.time() - time_s
        t = time_s + self._offset_s
        header.stamp.sec = int(t)
        header.stamp.nanosec = int(round((t - int(t)) * 1e9)) % 1_000_000_000

    def _publish(self) -> None:
        while self._running:
            self._wake.wait(0.1)
            self._wake.clear()
            while self._queue:
                item = self._queue.popleft()
                try:
                    if type(item) is tuple:
                        self._publish_sample(*item)
                    else:
                        data = item.as_dict()
                        data["model"] = self._label
                        self._event_pub.publish(String(data=json.dumps(data)))
                except Exception as exc:  # e.g. the context is shutting down
                    if self._running:
                        self._node.get_logger().error(f"publishing the collision observer failed: {exc}")
                    return

    def _publish_sample(self, time_s: float, torque: array, threshold: array) -> None:
        t_msg, r_msg = self._torque_msg, self._residual_msg
        self._stamp(t_msg.header, time_s)
        r_msg.header.stamp = t_msg.header.stamp
        t_msg.effort = torque
        self._torque_pub.publish(t_msg)
        r_msg.position = threshold
        r_msg.effort = array("d", (v / th for v, th in zip(torque, threshold)))
        self._residual_pub.publish(r_msg)


def in_loop_collision_monitor(node: Node, raw: dict, config, stamp_offset=None, tool=None):
    """(monitor, topics) of the observer in a robot loop from a node's ``collision_*`` parameter values
    (:data:`~robot_dynamics_id.hardware.collision_config.UR_INTERFACE_COLLISION_PARAMETERS`), for the robot of
    ``config`` (a UrInterfaceConfig); (None, None) when ``collision_model_file`` is empty. Raises ParameterError
    naming the node's parameter.

    ``tool``: the tool the node already knows (a Payload: ``mass_kg``, ``com_m``; osc_controller's), carried by
    the observer when ``collision_payload_kg`` is not set: otherwise its weight reads as an external torque."""
    from ..hardware.collision_config import make_collision_monitor, unprefixed
    from ..parameters import ParameterError

    p = unprefixed(raw)
    if not p.get("model_file"):
        return None, None
    if tool is not None and not p.get("payload_kg"):
        p = dict(p, payload_kg=float(tool.mass_kg), payload_com_m=[float(c) for c in tool.com_m])
    topics = CollisionTopics(node, config.joint_names, model_label=p["model_file"], stamp_offset=stamp_offset)
    try:
        monitor = make_collision_monitor(p, rate_hz=config.rate_hz, joint_names=config.joint_names,
                                         on_collision=topics.on_collision, on_sample=topics.on_sample,
                                         robot=config.robot_name)
    except ParameterError as exc:
        topics.close(0.0)
        raise ParameterError(str(exc).replace("parameter '", "parameter 'collision_", 1)) from None
    for note in monitor.detector.notes:
        node.get_logger().warning(note.replace("(payload_kg)", "(collision_payload_kg)"))
    node.get_logger().info(f"collision observer on {p['model_file']} in the robot loop; reaction {p['reaction']}; "
                           f"tool {float(p.get('payload_kg') or 0.0):g} kg at {list(p.get('payload_com_m') or [0] * 3)} m")
    return monitor, topics
