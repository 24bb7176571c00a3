"""Test-only helpers of robot_dynamics_id (not installed with the package): bags written the way other tools
write them, and more. test/conftest.py puts this folder's parent on sys.path."""
