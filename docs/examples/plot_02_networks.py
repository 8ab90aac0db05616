"""
The learned network and its arc strengths
=========================================

``mbstat.blankets`` learns the blanket of every variable; its ``plot()`` draws the network:
solid edges where two blankets agree (X in MB(Y) and Y in MB(X)), dashed red arrows where only
one holds the other. ``arc_strengths`` relearns every blanket on resamples and draws each pair
with a width in proportion to how often the pair agreed, as bnlearn's ``strength.plot``.
"""
# %%
# Every blanket of ALARM
# ----------------------
# From 5,000 rows some pairs disagree (dashed red arrows). With the d-separation oracle
# (``mbstat.blankets(network, method="iamb", test="oracle")``) every blanket is exact, every
# pair agrees, and the picture is the moral graph of ALARM.
import matplotlib.pyplot as plt

import mbstat
from mbstat.datasets import load_network, sample_network

network = load_network("alarm")
alarm = sample_network(network, 5000, seed=1)
coll = mbstat.blankets(alarm, method="iamb", calibration="asymptotic")
coll

# %%
ax = coll.plot()
print(f"{len(coll.asymmetric_pairs())} asymmetric pairs")

# %%
# Arc strengths over resamples
# ----------------------------
# A few targets around HR on 10 subsamples of half the rows (R = 200 in practice). Solid
# edges: the pair agreed in at least half of the resamples (the averaged network).
targets = ["HR", "HRBP", "HREKG", "HRSAT", "CO", "CATECHOL", "TPR", "BP", "STROKEVOLUME",
           "ERRCAUTER", "ERRLOWOUTPUT", "LVEDVOLUME"]
arcs = mbstat.arc_strengths(alarm, targets, "iamb", R=10, seed=1, calibration="asymptotic")
print(arcs.averaged(0.5).head(10))
ax = arcs.plot(kind="graph", threshold=0.5, min_strength=0.1)
plt.show()
