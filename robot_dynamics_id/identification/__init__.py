"""identification layer of robot_dynamics_id (see ../shared/DESIGN.md)."""
