"""A path given as data names what it is (issue 31 item 7): a Parquet path that does not
exist, a folder with no Parquet files, a single Parquet file, another file."""
import numpy as np
import pandas as pd
import pytest

import mbstat


@pytest.mark.parametrize("kind, message", [
    ("missing", r"got a \w+ '.*missing.parquet' \(read a file first, e.g. with "
                r"pandas.read_csv\): no file or directory of that name exists, and a path is "
                r"read only as a directory of Parquet files"),
    ("empty", r"the directory holds no Parquet files \(\*.parquet\)"),
    ("single", r"one Parquet file: give its directory \(read through Dask\) or read it with "
               r"pandas.read_parquet"),
    ("csv", r"got a \w+ '.*data.csv' \(read a file first, e.g. with pandas.read_csv\): a "
            r"path is read only as a directory of Parquet files"),
])
def test_a_path_that_is_not_a_parquet_directory_says_what_it_is(tmp_path, kind, message):
    frame = pd.DataFrame({"x": np.arange(10) % 2, "y": np.arange(10) % 3})
    path = {"missing": tmp_path / "missing.parquet", "empty": tmp_path / "empty",
            "single": tmp_path / "one.parquet", "csv": tmp_path / "data.csv"}[kind]
    if kind == "empty":
        path.mkdir()
        (path / "notes.txt").write_text("no data here")
    elif kind == "single":
        frame.to_parquet(path)
    elif kind == "csv":
        frame.to_csv(path, index=False)
    for data in (str(path), path):  # a str and a Path
        with pytest.raises(TypeError, match=message):
            mbstat.iamb(data, "y")
    with pytest.raises(TypeError, match=message):
        mbstat.as_dataset(str(path))
