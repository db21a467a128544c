"""`pix discover`: bounded multi-hypothesis literal/regex candidate-file discovery.

Several hypotheses (literal strings and regular expressions) are tested at once over a few
roots of the indexed work tree. A trigram index narrows the files each could match, the real
pattern is verified on each candidate's stored text, and every hypothesis x root cell gets a
status, so a `no_matches` from a complete cell is evidence of absence for that cell alone.
Modules: request (schema, defaults), fragments (what a pattern requires literally), scope
(roots, globs, filtering), trigram (reading texts and candidates), verify (matching lines,
excerpts), engine (cells, limits, ranking, response), render (text).
"""

from pix.discover.engine import discover
from pix.discover.render import render_text

__all__ = ["discover", "render_text"]
