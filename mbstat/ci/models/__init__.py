"""The model-based family: tests that fit supervised models (the PPI test of Hassan et al.,
the cross-fitted LOCO test, the holdout conditional randomization test) and the model
recipes they share (:mod:`.estimators`)."""
from .crt import CRTResult, CRTTest, crt_test
from .loco import LOCOResult, LOCOTest, loco_test
from .ppi import PPIResult, PPITest, ppi_test

__all__ = ["CRTResult", "CRTTest", "LOCOResult", "LOCOTest", "PPIResult", "PPITest", "crt_test",
           "loco_test", "ppi_test"]
