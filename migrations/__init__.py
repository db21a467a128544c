"""The numbered SQL migrations. Installed as the package `pix.migrations` (pyproject.toml maps
this folder), so pix reads them with importlib.resources in every kind of install."""
