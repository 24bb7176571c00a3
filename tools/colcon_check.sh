#!/usr/bin/env bash
# `colcon build && colcon test` of this repository in a scratch ROS workspace, the way a lab builds it.
#
#   tools/colcon_check.sh            a representative selection of the tests (a few minutes)
#   tools/colcon_check.sh --full     the whole test suite (long: every simulation and ROS test)
#   tools/colcon_check.sh -- ARGS    these pytest arguments instead
#
# Needs colcon on PATH: a sourced ROS 2 (apt), or `make setup` (PyPI colcon in .venv; `make colcon-check`
# puts .venv/bin first on PATH). The workspace is a copy of the tracked files under a temporary folder
# with no ../shared beside it: tests that need the shared sample bags skip and say what they need.
# The tests run the workspace's copy (colcon runs an ament_python package's tests in its source folder) and
# find launch files and configuration through the install's ament index (test/test_package_layout.py checks
# both); the install must hold the executables and not the test-only modules. Exit status: colcon's, then colcon test-result's.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
selection=(test/test_package_layout.py test/robots test/dynamics test/launch test/io/test_ur_description.py
           test/io/test_bag_reader.py test/identification/test_payload.py)
keep=0
while [ $# -gt 0 ]; do
    case "$1" in
        --full) selection=(); shift ;;
        --keep) keep=1; shift ;;
        --) shift; selection=("$@"); break ;;
        *) echo "colcon_check: unknown argument $1 (use --full, --keep or -- PYTEST_ARGS)" >&2; exit 2 ;;
    esac
done
command -v colcon >/dev/null || {
    echo "colcon_check: colcon is not on PATH; source ROS 2, or run 'make colcon-check' (PyPI colcon in .venv)" >&2
    exit 2
}

ws="$(mktemp -d "${TMPDIR:-/tmp}/rdi_colcon_ws.XXXXXX")"
cleanup() { if [ "$keep" = 0 ]; then rm -rf "$ws"; else echo "workspace kept: $ws"; fi; }
trap cleanup EXIT
mkdir -p "$ws/src/robot_dynamics_id"
(cd "$repo" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$ws/src/robot_dynamics_id"
cd "$ws"
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST OPENBLAS_NUM_THREADS=1 MUJOCO_GL=egl
# The workspace has no ../shared: its tests must skip naming what they need, not fail as `make test` asks
# (RDI_REQUIRE_SHARED=1) when the caller's environment carries that setting.
unset RDI_REQUIRE_SHARED
[ "${ROS_DISTRO:-}" = humble ] && export ROS_LOCALHOST_ONLY=1

echo "== colcon build ($ws)"
colcon build --event-handlers console_direct+
site="$(echo "$ws"/install/robot_dynamics_id/lib/python3*/site-packages/robot_dynamics_id)"
for module in launch_emulation.py net_trace.py; do
    if [ -e "$site/$module" ]; then echo "colcon_check: test-only module $module was installed" >&2; exit 1; fi
done
test -x "$ws/install/robot_dynamics_id/lib/robot_dynamics_id/rdi" || { echo "colcon_check: no rdi executable" >&2; exit 1; }

echo "== colcon test ${selection[*]:-(whole suite)}"
export RDI_EXPECT_INSTALL_PREFIX="$ws/install"
if [ ${#selection[@]} -gt 0 ]; then
    colcon test --event-handlers console_direct+ --pytest-args "${selection[@]}" -q -ra
else
    colcon test --event-handlers console_direct+ --pytest-args -q -ra
fi
echo "== colcon test-result"
colcon test-result --verbose
echo "colcon_check: build and test passed"
