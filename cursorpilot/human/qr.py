"""A QR code of the decision page's link, drawn with Unicode half blocks for a terminal (segno, the only importer of
it, imported only when a link a phone could open is shown): point a phone's camera at it, on the same network."""

from __future__ import annotations

import io


def drawn(url: str) -> str:
    """The code as text, two modules per character row, with its quiet zone (light on dark or dark on light alike)."""
    import segno

    out = io.StringIO()
    segno.make(url, error="l").terminal(out=out, compact=True, border=2)
    return out.getvalue().rstrip("\n")
