"""The model manifest, tokenizer and other model data. Installed as the package `pix.models`
(pyproject.toml maps this folder; its package-data globs name the data file types).

Keep scripts that build model files out of this folder's top level (use a subfolder or bench/):
setuptools ships every top-level *.py of a package as a module, and tests/test_wheel.py checks
that the wheel carries none besides this file."""
