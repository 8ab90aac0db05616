"""The adjusted-df tests (g2-adf, x2-adf) report what bnlearn 4.9 reports: the adjusted df
even when the power rule skips the test (fewer than 5 rows per cell), and df 0 (statistic
0, p 1) when the adjusted df is 0. The figures were recorded from R 4.2, bnlearn 4.9:

    d <- data.frame(a = factor(c("p","p","q","q")), b = factor(c("x","y","x","y")),
                    c = factor(c("u","u","v","v")))
    ci.test("a", "b", "c", data = d, test = "mi-adf")          # 0, df 0, p 1 (skipped)
    ci.test("a", "b", "c", data = d[rep(1:4, 20), ], test = "mi-adf")  # 0, df 0, p 1
    set.seed(1); n <- 12; three factors of 3 levels, sample(letters[1:3], n, TRUE) each:
    ci.test("a", "b", "c", ..., test = "mi-adf")   # 0, df 5, p 1 (skipped)
    ci.test("a", "b", ..., test = "mi-adf")        # 0, df 4, p 1 (skipped)
(x2-adf gives the same figures.)"""
import pandas as pd
import pytest

import mbstat

#: R's set.seed(1) sample of the three 3-level factors (12 rows), from write.csv.
R_SAMPLE = {"a": list("acabaccbbcca"), "b": list("aabbbbcacaaa"), "c": list("abaabbbacacb")}


@pytest.mark.parametrize("test", ["g2-adf", "x2-adf"])
@pytest.mark.parametrize("copies, calibration", [(1, "skipped"), (20, "asymptotic")])
def test_zero_adjusted_df_is_reported_zero(test, copies, calibration):
    d = pd.DataFrame({"a": list("ppqq"), "b": list("xyxy"), "c": list("uuvv")})
    d = pd.concat([d.astype("category")] * copies, ignore_index=True)
    r = mbstat.ci_test(d, "a", "b", ("c",), test=test)
    assert (r.statistic, r.df, r.pvalue) == (0.0, 0.0, 1.0)
    assert r.calibration == calibration


@pytest.mark.parametrize("test", ["g2-adf", "x2-adf"])
def test_skipped_test_keeps_the_adjusted_df(test):
    d = pd.DataFrame(R_SAMPLE).astype("category")
    r = mbstat.ci_test(d, "a", "b", ("c",), test=test)
    assert (r.statistic, r.df, r.pvalue, r.calibration) == (0.0, 5.0, 1.0, "skipped")
    r = mbstat.ci_test(d, "a", "b", test=test)
    assert (r.statistic, r.df, r.pvalue, r.calibration) == (0.0, 4.0, 1.0, "skipped")
