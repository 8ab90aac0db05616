"""
A first look: one blanket, its evidence and its pictures
========================================================

IAMB and MBOR learn the Markov blanket of ``HR`` (heart rate) in 5,000 rows sampled from the
ALARM network. The summary shows the test that kept each member; the p-value chart shows
every candidate's deciding test; the graph shows HR with its parents and children and, for
MBOR, its spouses joined to the child they share with HR.
"""
# %%
# Learn a blanket
# ---------------
# The result displays as HTML in a notebook (and here): the same content as
# ``print(res.summary())``.
import matplotlib.pyplot as plt

import mbstat
from mbstat.datasets import load_network, sample_network

alarm = sample_network("alarm", 5000, seed=1)
res = mbstat.iamb(alarm, "HR")
res

# %%
# The evidence for every candidate
# --------------------------------
# The members' p-values are hundreds of orders of magnitude below the others', so the axis
# turns symmetric-log above -log10 p = 1, as its label says: the excluded candidates' bars,
# near p = 1, stay visible beside them.
ax = res.plot()

# %%
# MBOR separates parents and children from spouses
# ------------------------------------------------
# Each spouse is joined to the common child its keeping test conditioned on: the child is a
# collider, so both arcs into it have a direction. Labels are the deciding p-values.
mb = mbstat.mbor(alarm, "HR")
print("parents and children:", mb.parents_children)
print("spouses:", mb.spouses, "joined to", mb.spouse_links())
ax = mb.plot(kind="graph")

# %%
# The true blanket, for comparison
# --------------------------------
# ALARM's graph is known: ``markov_blanket`` gives HR's true parents, children and spouses.
truth = load_network("alarm")
print("true blanket:", sorted(truth.markov_blanket("HR")))
print("found by MBOR:", sorted(mb.blanket))
plt.show()
