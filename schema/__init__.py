"""The JSON contracts. Installed as the package `pix.schema` (pyproject.toml maps this folder),
so pix reads them with importlib.resources in a checkout, an editable install and a wheel alike."""
