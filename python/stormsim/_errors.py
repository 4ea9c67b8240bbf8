"""The exception a model or sweep that cannot run raises."""

from __future__ import annotations


class ModelError(ValueError):
    """A model (or sweep) that cannot run, with every problem found at once.

    ``problems`` is a list of ``(path, message)``: the JSON path of each
    problem (``services[B].workers``; empty where no path applies, as for
    invalid JSON, whose line and column are in the message) and what is
    wrong there. ``str(error)`` is what ``stormsim check`` prints for it:
    ``SOURCE: N problems found:`` and one indented line per problem.
    """

    def __init__(self, source: str, problems: list[tuple[str, str]]):
        self.source = source
        self.problems = [(str(path), str(message)) for path, message in problems]
        n = len(self.problems)
        lines = [f"{source}: {n} problem{'' if n == 1 else 's'} found:"]
        lines += [f"  {path}: {message}" if path else f"  {message}" for path, message in self.problems]
        super().__init__("\n".join(lines))

    def __reduce__(self):
        return (type(self), (self.source, self.problems))
