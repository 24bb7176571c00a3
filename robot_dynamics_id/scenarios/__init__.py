"""scenarios layer of robot_dynamics_id: closed-loop scenarios over sim, hardware and control (../shared/DESIGN.md)."""
