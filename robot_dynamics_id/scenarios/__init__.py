"""scenarios layer of robot_dynamics_id: closed-loop scenarios over sim/hardware and control (see ../shared/DESIGN.md)."""
