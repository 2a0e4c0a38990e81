"""erf_fit.py - fits the rational approximation of erf used for float32 by src/cpu/ew_unary.c
(erf_rat_f: erf(x) ~ x * P(x^2) / Q(x^2) on [-4, 4], P of degree 6, Q of degree 5, Q(0) = 1)
and prints its coefficients and its error measured in float32 arithmetic.
Method: linearised least squares P(t) - f(t) Q(t) = 0 on t = x^2, f = erf(x)/x, reweighted by
x / Q(t) (Loeb's iteration) so the fit minimises the absolute error of x * P/Q, not of P/Q.
    /usr/bin/python3 tools/erf_fit.py       (needs numpy and scipy)"""
import numpy as np
import scipy.special as sp

x = np.linspace(0, 4, 20001)[1:]
f = sp.erf(x) / x
t = x * x
DP, DQ = 6, 5
A = np.hstack([np.vstack([t**i for i in range(DP + 1)]).T,
               -(f[:, None]) * np.vstack([t**j for j in range(1, DQ + 1)]).T])
Q = np.ones_like(t)
for _ in range(30):
    W = (x / Q)[:, None]
    sol, *_ = np.linalg.lstsq(A * W, f * W[:, 0], rcond=None)
    p = sol[:DP + 1]
    q = np.concatenate([[1.0], sol[DP + 1:]])
    Q = np.polyval(q[::-1], t)
p32, q32 = p.astype(np.float32), q.astype(np.float32)
xs = np.linspace(-4, 4, 400001).astype(np.float32)
ts = xs * xs
P = np.zeros_like(xs)
for c in p32[::-1]:
    P = P * ts + c
Qv = np.zeros_like(xs)
for c in q32[::-1]:
    Qv = Qv * ts + c
r = np.clip(xs * (P / Qv), -1, 1)
print("P:", ", ".join("%.9e" % v for v in p))
print("Q:", ", ".join("%.9e" % v for v in q))
print("max abs error in float32 on [-4, 4]: %.3g" % np.max(np.abs(r.astype(np.float64) - sp.erf(xs.astype(np.float64)))))
