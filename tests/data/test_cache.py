import os

from tfm.data.cache import resolve_data_dir


def test_argument_then_env_then_project_default(tmp_path, monkeypatch):
    monkeypatch.setenv("TFM_DATA_DIR", str(tmp_path / "env"))
    assert resolve_data_dir(tmp_path / "arg") == str(tmp_path / "arg")
    assert resolve_data_dir() == str(tmp_path / "env")
    monkeypatch.delenv("TFM_DATA_DIR")
    default = resolve_data_dir()
    assert default.endswith(os.path.join("data", "cache")) and os.path.isabs(default)
