"""
The constants of the snow laws (core/physics/snow.py), in a module without numba.

``describe`` states them in words (core/sensors/describe.py) without loading the kernels that
physics/snow.py's cover rule brings in through physics/radiometry.py.
"""

#: ITU-R P.1817 snow law: (slope per nm, intercept, exponent b) of a(lambda) = slope lambda + c.
SNOW_LAWS = {'dry': (5.42e-5, 5.4958776, 1.38), 'wet': (1.023e-4, 3.7855466, 0.72)}
#: Gunn & Marshall (1958): N0 = GM_N0 S^GM_N0_EXP m^-3 mm^-1, Lambda = GM_LAMBDA S^GM_LAMBDA_EXP.
GM_N0, GM_N0_EXP = 3.8e3, -0.87
GM_LAMBDA, GM_LAMBDA_EXP = 2.55, -0.48
