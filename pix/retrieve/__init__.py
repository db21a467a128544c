"""Retrieval: route a question to channel weights, fuse the channels in SQL, aggregate files."""
