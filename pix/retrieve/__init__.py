"""Retrieval: route a question to channel weights, fuse the channels in SQL, rank (chunks and
files) in Python."""
