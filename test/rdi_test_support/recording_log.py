"""A stand-in for a node's logger that keeps what was logged, as (level, text) pairs."""


class RecordingLog:
    """``node.get_logger = lambda: log``; then ``log.lines`` holds every (level, text) in order."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def __getattr__(self, level: str):
        return lambda text, **_kwargs: self.lines.append((level, text))
