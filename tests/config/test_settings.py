"""Where the shared data folder is (lsqa.config.settings, issue 29 "loose ends"): LSQA_DATA_DIR,
else the settings file's data_dir, else ../shared/data from the current folder — never a path
relative to where the lsqa source sits."""

from __future__ import annotations

from pathlib import Path

from lsqa.config.settings import data_dir, load_settings


def test_default_is_shared_data_beside_the_current_folder(tmp_path, monkeypatch):
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    monkeypatch.chdir(checkout)
    monkeypatch.delenv("LSQA_DATA_DIR", raising=False)
    assert data_dir() == tmp_path / "shared" / "data"
    assert load_settings().data_dir.is_absolute()


def test_settings_file_then_environment(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LSQA_DATA_DIR", raising=False)
    (tmp_path / "lsqa.toml").write_text('data_dir = "corpora"\n', encoding="utf-8")
    assert data_dir() == Path("corpora")
    monkeypatch.setenv("LSQA_DATA_DIR", str(tmp_path / "elsewhere"))
    assert data_dir() == tmp_path / "elsewhere"
