"""Sub-commands of the ``rdi`` CLI, one module each.

Each module defines ``COMMAND`` (the sub-command name, e.g. ``"natural-oscillation"``),
``HELP`` (one line), ``configure(parser: argparse.ArgumentParser) -> None`` and
``run(args: argparse.Namespace) -> int`` (the exit code). ``rdi`` discovers them
with pkgutil, so adding a command means adding a module here and nothing else.
A command imports heavy dependencies inside ``run`` so ``rdi --help`` stays fast.
"""
