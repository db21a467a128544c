"""The database: opening, migrations, transactions and every SQL statement pix runs."""

from pix.store.db import Store, open_store

__all__ = ["Store", "open_store"]
