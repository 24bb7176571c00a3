"""``rdi slider-crank``: run the Aghili (P5) slider-crank reproduction and print its numbers."""

from __future__ import annotations

import argparse

COMMAND = "slider-crank"
HELP = "Simulate and control the equal-length slider-crank through its singularity (Aghili P5) and print the numbers."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per run (default 10)")
    parser.add_argument("--step", type=float, default=1e-3, help="RK4 step in seconds (default 0.001)")
    parser.add_argument("--crank-rate", type=float, default=6.0,
                        help="initial crank rate of the free run, rad/s (default 6)")


def run(args: argparse.Namespace) -> int:
    from ..scenarios.slider_crank import reproduce_slider_crank

    if args.duration <= 0 or args.step <= 0 or args.step > args.duration:
        raise ValueError("--duration and --step must be > 0 with --step <= --duration")
    numbers = reproduce_slider_crank(duration_s=args.duration, step_s=args.step, crank_rate_rad_s=args.crank_rate)
    print(f"slider-crank, equal crank and rod (0.3 m), cut at the slider; RK4 at {args.step:g} s for {args.duration:g} s")
    for key, value in numbers.items():
        print(f"  {key:45s} {value:.3e}" if isinstance(value, float) else f"  {key:45s} {value}")
    return 0
