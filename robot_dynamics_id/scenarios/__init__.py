"""Closed-loop scenarios and paper reproductions (shared/DESIGN.md: above sim/ and control/).

A scenario puts a controller (control/) or an identification method (identification/) in
the loop with a simulated plant (sim/) and returns time series and the figures a paper or
an acceptance criterion names. Nothing below this package imports it.
"""
