"""ament_python set-up of robot_dynamics_id (also an ordinary pip-installable package)."""

from glob import glob

from setuptools import find_packages, setup

PACKAGE = "robot_dynamics_id"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + PACKAGE]),
        ("share/" + PACKAGE, ["package.xml"]),
        ("share/" + PACKAGE + "/launch", glob("launch/*.launch.py")),
        ("share/" + PACKAGE + "/config", glob("config/*.yaml")),
    ],
    install_requires=["setuptools", "numpy", "scipy", "pyyaml"],
    zip_safe=True,
    maintainer="robot_dynamics_id maintainers",
    maintainer_email="maintainers@robot-dynamics-id.invalid",
    description="Dynamics identification and operational-space force/motion control for UR arms",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "rdi = robot_dynamics_id.cli:main",
            "ur_interface = robot_dynamics_id.nodes.ur_interface:main",
            "excitation = robot_dynamics_id.nodes.excitation:main",
            "torque_logger = robot_dynamics_id.nodes.torque_logger:main",
            "identifier = robot_dynamics_id.nodes.identifier:main",
            "osc_controller = robot_dynamics_id.nodes.osc_controller:main",
            "natural_oscillation = robot_dynamics_id.nodes.natural_oscillation:main",
            "collision_monitor = robot_dynamics_id.nodes.collision_monitor:main",
        ],
    },
)
