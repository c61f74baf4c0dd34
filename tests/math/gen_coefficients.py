#!/usr/bin/env python3
"""Derives the polynomial coefficients of core/include/ew/detail/math.hpp.

Each polynomial is a near-minimax Chebyshev fit (mpmath.chebyfit) of the smooth part of a
function, rounded to the working precision; the script prints the coefficients as hex
float literals (lowest degree first, as math.hpp's horner() takes them) and the maximum error of
the rounded polynomial against the exact function, relative to the part it approximates.
Run it with python3 and mpmath: `python3 tests/math/gen_coefficients.py`.
"""
import struct

import mpmath as mp

mp.mp.dps = 100


def to_f32(x):
    return struct.unpack('f', struct.pack('f', float(x)))[0]


def hexlit(x, f32):
    mant, _, exp = float(x).hex().partition('p')
    mant = mant.rstrip('0').rstrip('.') if '.' in mant else mant
    if mant.endswith('.'):
        mant = mant[:-1]
    return f"{mant}p{exp}" + ("f" if f32 else "")


def fit(name, f, interval, degree, f32, weight, samples=4000):
    poly = mp.chebyfit(f, interval, degree + 1)
    rounded = [mp.mpf(to_f32(c) if f32 else float(c)) for c in poly]
    a, b = interval
    worst = mp.mpf(0)
    for k in range(samples + 1):
        x = a + (b - a) * k / samples
        if abs(x) < mp.mpf(10) ** -25:
            continue
        worst = max(worst, abs((mp.polyval(rounded, x) - f(x)) * weight(x)))
    ulp = mp.mpf(2) ** (-23 if f32 else -52)
    print(f"{name} ({'f32' if f32 else 'f64'}), degree {degree}: max error {mp.nstr(worst / ulp, 3)} ulp"
          " of the function's value (ulp at 1)")
    print("  " + ", ".join(hexlit(c, f32) for c in reversed(rounded)))


def exp_tail(r):  # exp(r) = 1 + r + r^2 q(r)
    if r == 0:
        return mp.mpf(1) / 2
    return (mp.exp(r) - 1 - r) / (r * r)


def tanh_tail(z):  # tanh(x) = x + x z q(z), z = x^2
    x = mp.sqrt(z)
    return (mp.tanh(x) - x) / (x * z)


def log_tail(z):  # log(1+f) = 2 atanh(s) = 2s + s R(z), s = f/(2+f), z = s^2, R = z g(z)
    s = mp.sqrt(z)
    return (2 * mp.atanh(s) - 2 * s) / (s * z)


half_ln2 = mp.log(2) / 2 + mp.mpf(2) ** -12  # |r| after the reduction, with slack for the rounded x*log2(e)
s_max = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1) + mp.mpf(2) ** -20
tanh_small = mp.mpf('0.625')

# The weights turn an error in the fitted tail into an error relative to the function's value.
def exp_weight(r):
    return r * r / mp.exp(r)


def tanh_weight(z):
    x = mp.sqrt(z)
    return x * z / mp.tanh(x)


def log_weight(z):  # relative to log(1+f), f = 2s/(1-s)
    s = mp.sqrt(z)
    return s * z / (2 * mp.atanh(s))


import sys
degrees = [int(d) for d in sys.argv[1:]] or [5, 10, 3, 6, 5, 11]  # the degrees math.hpp uses
tiny = mp.mpf(10) ** -30
fit("exp q(r)", exp_tail, [-half_ln2, half_ln2], degrees[0], True, exp_weight)
fit("exp q(r)", exp_tail, [-half_ln2, half_ln2], degrees[1], False, exp_weight)
fit("log g(z)", log_tail, [tiny, s_max ** 2], degrees[2], True, log_weight)
fit("log g(z)", log_tail, [tiny, s_max ** 2], degrees[3], False, log_weight)
fit("tanh q(z)", tanh_tail, [tiny, tanh_small ** 2], degrees[4], True, tanh_weight)
fit("tanh q(z)", tanh_tail, [tiny, tanh_small ** 2], degrees[5], False, tanh_weight)
