# robot_dynamics_id — set-up entry point.
#
#   make demo   the main job on the simulated UR3 (creates .venv/ on first use)
#   make test   the test suite                   (creates .venv/ on first use)
#
# Both install everything they need into .venv/: the PyPI ROS 2 wheels when no
# ROS 2 is sourced, or, when one is (ROS_DISTRO set and rclpy importable), a
# venv that sees the sourced distribution plus the pip-only dependencies.
#
# Every ROS process started from here stays on loopback: DDS discovery would
# otherwise multicast to 239.255.0.1 on every interface.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
# Each run (test session, demo) reserves a free DDS domain of its own in Python
# (robot_dynamics_id.ros_processes.reserve_domain_id), so parallel runs never meet.
ifeq ($(ROS_DISTRO),humble)
# Humble predates ROS_AUTOMATIC_DISCOVERY_RANGE.
export ROS_LOCALHOST_ONLY := 1
endif
export PYTHONUNBUFFERED := 1
# Small matrices on 2 cores shared by several processes: threaded BLAS is far slower here.
export OPENBLAS_NUM_THREADS ?= 1
# The simulator renders nothing; never let MuJoCo look for a display.
export MUJOCO_GL := egl

# Pinned so that a fresh install next month behaves the same (checked on Python 3.11).
PIP_CORE := wheel==0.48.0 numpy==2.4.6 scipy==1.17.1 PyYAML==6.0.3 matplotlib==3.11.2 \
            pin==4.1.0 mujoco==4.0.0 rosbags==0.11.9 ur_rtde==1.6.5 pytest==9.2.0
# colcon from PyPI, for tools/colcon_check.sh (`colcon build && colcon test` in a scratch workspace).
PIP_COLCON := colcon-core==0.21.3 colcon-ros==0.5.0 colcon-python-setup-py==0.2.9 colcon-bash==0.5.0 \
              colcon-test-result==0.3.8 ros-ament-package==0.17.2
# ROS 2 Kilted wheels from PyPI, used only when no ROS 2 is sourced.
PIP_ROS := ros-rclpy==9.1.2 ros-rmw-fastrtps-cpp==9.3.3 ros-std-msgs==5.5.1 \
           ros-sensor-msgs==5.5.1 ros-geometry-msgs==5.5.1 ros-trajectory-msgs==5.5.1 \
           ros-diagnostic-msgs==5.5.1

STAMP := $(VENV)/.installed-$(shell cat Makefile setup.py | cksum | cut -d' ' -f1)

.PHONY: demo test setup bench clean-venv colcon-check

setup: $(STAMP)

$(STAMP): Makefile setup.py
	@echo "== setting up $(VENV) (first use or changed pins; about a minute) =="
	@if [ -n "$$ROS_DISTRO" ] && $(PYTHON) -c 'import rclpy' 2>/dev/null; then \
	    echo "   using the sourced ROS 2 $$ROS_DISTRO for rclpy and messages"; \
	    [ -x $(PY) ] || $(PYTHON) -m venv --system-site-packages $(VENV); \
	    $(PY) -m pip install -q --upgrade pip && $(PY) -m pip install -q $(PIP_CORE); \
	    command -v colcon >/dev/null || $(PY) -m pip install -q $(PIP_COLCON); \
	else \
	    echo "   no ROS 2 sourced: installing the PyPI ROS 2 wheels"; \
	    [ -x $(PY) ] || $(PYTHON) -m venv $(VENV); \
	    $(PY) -m pip install -q --upgrade pip && $(PY) -m pip install -q $(PIP_CORE) $(PIP_ROS) $(PIP_COLCON); \
	fi
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	@rm -f $(VENV)/.installed-* && touch $@
	@echo "== $(VENV) ready =="

demo: $(STAMP)
	$(PY) -m robot_dynamics_id.cli demo $(ARGS)

# ../shared (sample bags) travels with the repository here and in CI: its absence is an error, not a skip.
test: $(STAMP)
	RDI_REQUIRE_SHARED=1 $(PY) -m pytest test -q -ra $(ARGS)

# colcon build + colcon test of a copy of this repository in a scratch workspace (tools/colcon_check.sh).
colcon-check: $(STAMP)
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" tools/colcon_check.sh $(ARGS)

# Every benchmark, short form where it has one (--quick); one that exits non-zero is listed at the end.
bench: $(STAMP)
	@failed=""; for b in benchmarks/bench_*.py; do \
	    args=""; grep -q -- '"--quick"' $$b && args="--quick"; \
	    echo "== $$b $$args"; $(PY) $$b $$args || failed="$$failed $$b"; \
	done; if [ -n "$$failed" ]; then echo "benchmarks that exited non-zero:$$failed"; exit 1; fi

clean-venv:
	rm -rf $(VENV)
