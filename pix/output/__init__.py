"""Output: the character budget, text rendering, the clipboard, context packets (packet, tokens)
and secret masking (redact finds secrets, mask hides them line by line)."""
