"""Output: the character budget, text rendering and the clipboard."""
