#!/usr/bin/env python3
"""Student's t quantiles to 19 digits, computed with mpmath at 40, for the
table REFERENCE_QUANTILES in src/tests.rs (pip install mpmath)."""
import mpmath as mp

mp.mp.dps = 40


def t_quantile(p, dof):
    """t with P(T > t) = 1 - p, by a root search on the regularized
    incomplete beta: P(T > t) = I_x(dof/2, 1/2) / 2, x = dof / (dof + t^2)."""
    dof, p = mp.mpf(dof), mp.mpf(p)
    tail = lambda t: mp.betainc(dof / 2, mp.mpf(1) / 2, 0, dof / (dof + t * t),
                                regularized=True) / 2 - (1 - p)
    normal = mp.sqrt(2) * mp.erfinv(2 * p - 1)
    return mp.findroot(tail, (normal, normal * (20 if dof < 5 else 2)), solver="anderson")


for dof in [3, 10, 30, 100, 1000, 3000, 4000, 10**4, 10**5, 10**6, 10**7]:
    for p in ["0.9", "0.975", "0.995", "0.9995"]:
        print(f"    ({p}, {float(dof):.1e}, {mp.nstr(t_quantile(p, dof), 19)}),")
