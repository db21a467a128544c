"""Where pix's data files are: the one place that names them.

The repository's top-level folders schema/, migrations/ and models/ are their single source.
pyproject.toml maps them onto the packages pix.schema, pix.migrations and pix.models, so a wheel
(pip or pipx install) carries them inside pix/, and an editable install's import hook resolves
those packages to the checkout's folders. Reading them through importlib.resources, never a
path computed from this file, is what makes every kind of install find the same files.

Each constant is a directory as importlib.resources.abc.Traversable: join with `/`, read with
`read_text()` / `read_bytes()`, list with `iterdir()`. A library that insists on a file name
takes `importlib.resources.as_file(resource)`.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable

MIGRATIONS_DIR: Traversable = files("pix.migrations")
SCHEMA_DIR: Traversable = files("pix.schema")
MODELS_DIR: Traversable = files("pix.models")
