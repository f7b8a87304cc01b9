"""Fuzz target: charset decoding of fetched bodies (REQ-PAGE-007; THR-20).

``rypsok.fetch.charset.decode`` with any body, any declared charset (a known label, an unknown
one or fuzzed text) and every media kind. Invariants: it never raises; the codec is one of the
allowed text encodings (never ``utf-7``, ``unicode_escape`` or another transforming codec); the
text is no longer than the body (no decoding multiplies characters); a body that decodes
strictly is not reported as replaced.
"""

from __future__ import annotations

import codecs

from _harness import Input, check, instrumented, main

with instrumented():
    from rypsok.fetch import charset
    from rypsok.fetch.media import MediaKind

_LABELS = (
    None,
    "utf-8",
    "UTF-16",
    "shift_jis",
    "iso-2022-jp",
    "gb18030",
    "x-user-defined",
    "utf-7",
    "unicode_escape",
    "rot13",
    "  Windows-1252 ",
    '"koi8-r"',
    "hz-gb-2312",
)
_KINDS = tuple(MediaKind)


def test_one_input(data: bytes) -> None:
    """Decode the input and check the invariants."""
    source = Input(data)
    label = source.pick(_LABELS) if source.flag() else source.sized_text(48)
    kind = source.pick(_KINDS)
    body = source.raw()
    decoded = charset.decode(body, header_charset=label, kind=kind)
    check(isinstance(decoded.text, str), "decode returned no text")
    check(decoded.encoding in charset._ALLOWED, f"codec {decoded.encoding!r} is not allowed")
    check(codecs.lookup(decoded.encoding).name not in ("utf-7", "unicode-escape"), "bad codec")
    check(len(decoded.text) <= len(body), "decoding multiplied the characters")
    if not decoded.replaced:
        check(decoded.source in ("bom", "header", "document", "detected", "default"), "source")


if __name__ == "__main__":
    main(test_one_input)
