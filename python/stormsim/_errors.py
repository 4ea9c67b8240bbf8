"""The exceptions: a model or sweep that cannot run, and a verdict to fail on."""

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


class VerdictFailed(RuntimeError):
    """A run (or sweep) in which a variant (a run) was judged one of the
    outcomes ``fail_on`` names, as ``stormsim run --fail-on`` exits 4.

    ``failing`` is a list of ``(where, outcome, reason)``: the variant's
    name (a sweep: ``point P replication R``), its outcome and the verdict's
    reason. ``result`` is the whole ``Run`` or ``SweepResult``, all its
    frames there to read. ``str(error)`` has one ``FAIL`` line per failing
    one, as the command prints them.
    """

    def __init__(self, source: str, failing: list[tuple[str, str, str]], result=None):
        self.source = source
        self.failing = [(str(w), str(o), str(r)) for w, o, r in failing]
        self.result = result
        n = len(self.failing)
        lines = [f"{source}: {n} judged an outcome to fail on:"]
        lines += [f"  FAIL {w}: {o}: {r}" for w, o, r in self.failing]
        super().__init__("\n".join(lines))

    def __reduce__(self):
        return (type(self), (self.source, self.failing, self.result))
