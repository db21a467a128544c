"""Where the project's data folders are: migrations/, schema/ and models/ sit beside pix/."""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
MIGRATIONS_DIR = PROJECT_ROOT / "migrations"
SCHEMA_DIR = PROJECT_ROOT / "schema"
MODELS_DIR = PROJECT_ROOT / "models"
