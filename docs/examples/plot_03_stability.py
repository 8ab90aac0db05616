"""
How sure is one blanket? Stability selection
============================================

``mbstat.stability`` reruns a learner on R subsamples of half the rows and reports how often
each candidate was selected, with a Wilson 95% interval for the Monte Carlo error of R
resamples. The stable blanket keeps the candidates selected often enough to bound the expected
number of false members (Meinshausen and Bühlmann 2010).
"""
# %%
import matplotlib.pyplot as plt

import mbstat
from mbstat.datasets import sample_network

alarm = sample_network("alarm", 2000, seed=1)
stab = mbstat.stability(alarm, "HR", "iamb", R=20, seed=1, calibration="asymptotic")
stab

# %%
# Inclusion frequencies with their intervals; the dots mark the members of the run on all
# the rows.
ax = stab.plot(top=15)
plt.show()
