"""pix: local code retrieval over one portable SQLite file."""

__version__ = "0.1.0"
