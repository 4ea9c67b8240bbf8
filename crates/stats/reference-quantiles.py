#!/usr/bin/env python3
"""Student's t and normal quantiles to 19 digits, computed with mpmath at 40 digits,
for the tables in src/tests.rs (pip install mpmath).

Each probability is the f64 the test passes, taken exactly (mpf(float)), not
its decimal: 0.9995 as a double is 0.99950000000000005507..., whose quantile
at 3 degrees of freedom differs from 0.9995's by 4e-14 of itself."""
import mpmath as mp

mp.mp.dps = 40


def upper_tail(t, dof):
    """P(T > t) for t >= 0; dof None is the standard normal."""
    if dof is None:
        return mp.erfc(t / mp.sqrt(2)) / 2
    x = dof / (dof + t * t)
    tail = mp.betainc(dof / 2, mp.mpf(1) / 2, 0, x, regularized=True) / 2
    if tail < mp.mpf("0.25"):
        return tail
    # Near the median, from the central probability (no cancellation).
    central = mp.betainc(mp.mpf(1) / 2, dof / 2, 0, t * t / (dof + t * t), regularized=True)
    return (1 - central) / 2


def density(t, dof):
    if dof is None:
        return mp.npdf(t)
    return mp.exp(-(dof + 1) / 2 * mp.log1p(t * t / dof)) / (mp.sqrt(dof) * mp.beta(dof / 2, mp.mpf(1) / 2))


def quantile(p, dof):
    """The p quantile, p an f64, dof an f64 or None (the normal)."""
    p = mp.mpf(p)
    dof = None if dof is None else mp.mpf(dof)
    if p == mp.mpf(1) / 2:
        return mp.mpf(0)
    tail = min(p, 1 - p)
    # Newton's method on ln P(T > t) = ln tail in u = ln t: smooth from the
    # median to the farthest tails.
    u = mp.log(mp.sqrt(-2 * mp.log(2 * tail)) + mp.mpf("1e-3"))
    if dof is not None:
        # Heavy tails: P(T > t) ~ C t^-dof for large t.
        u = max(u, -mp.log(tail) / dof / 2)
    for _ in range(500):
        t = mp.exp(u)
        upper = upper_tail(t, dof)
        step = (mp.log(upper) - mp.log(tail)) / (t * density(t, dof) / upper)
        u += max(min(step, 5), -5)
        if abs(step) < mp.mpf(10) ** -32:
            break
    else:
        raise RuntimeError(f"no convergence at p = {p}, dof = {dof}")
    t = mp.exp(u)
    return t if p > mp.mpf(1) / 2 else -t


def row(p, dof):
    name = "None" if dof is None else f"Some({float(dof)!r})"
    line = f"    ({float(p)!r}, {name}, {mp.nstr(quantile(p, dof), 19)}),"
    print(line, flush=True)
    return line


rows = []
# The intervals' levels across the methods: Newton on the continued fraction
# below 4,000 degrees of freedom, Cornish-Fisher from 4,000 on.
for dof in [3, 10, 30, 100, 1000, 3000, 3999, 4000, 10**4, 10**5, 10**6, 10**7]:
    for p in [0.9, 0.975, 0.995, 0.9995]:
        rows.append(row(p, float(dof)))
# Far tails: the Cauchy's (one degree of freedom), heavy tails where t^2/dof
# overflows, and tails too far for Cornish-Fisher at 4,000 and more.
for p, dof in [(1e-6, 1.0), (1e-10, 1.0), (1.0 - 2.0**-53, 1.0), (1e-300, 1.0),
               (1e-100, 0.5), (1e-300, 1.5), (1e-20, 0.1), (1e-16, 4000.0),
               (1e-300, 4000.0), (1e-300, 1e4), (1e-300, 1e5)]:
    rows.append(row(p, dof))
# Near the median, where the tail is 1/2 less a little.
for p, dof in [(0.5 + 1e-10, None), (0.5 - 1e-10, None), (0.500001, None),
               (0.5 + 1e-10, 5.0), (0.500001, 30.0), (0.5 + 2.0**-40, 2.0), (0.6, 27.0)]:
    rows.append(row(p, dof))
print(f"// {len(rows)} rows")
