"""Just enough PDF reading to check what fpdf2 wrote: the text of every page.

fpdf2 embeds TrueType subsets as Type0 fonts: text is a sequence of 2-byte glyph codes,
decoded through each font's /ToUnicode CMap. Good for our own reports, not a general parser.
"""

from __future__ import annotations

import re
import zlib

_OBJ = re.compile(rb"(\d+) 0 obj(.*?)endobj", re.S)
_STREAM = re.compile(rb"stream\r?\n(.*?)\r?\nendstream", re.S)
_ESCAPES = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"b": b"\b", b"f": b"\f"}


def _objects(pdf: bytes) -> dict[int, bytes]:
    return {int(m.group(1)): m.group(2) for m in _OBJ.finditer(pdf)}


def _stream(obj: bytes) -> bytes:
    match = _STREAM.search(obj)
    if not match:
        return b""
    data = match.group(1)
    try:
        return zlib.decompress(data)
    except zlib.error:
        return data


def _cmap(data: bytes) -> dict[int, str]:
    out: dict[int, str] = {}
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", data, re.S):
        for src, dst in re.findall(rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block):
            out[int(src, 16)] = bytes.fromhex(dst.decode()).decode("utf-16-be")
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", data, re.S):
        for lo, hi, dst in re.findall(
            rb"<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>\s*<([0-9A-Fa-f]+)>", block
        ):
            start = int(dst, 16)
            for i, code in enumerate(range(int(lo, 16), int(hi, 16) + 1)):
                out[code] = chr(start + i)
    return out


def _literal(raw: bytes) -> bytes:
    out = bytearray()
    i = 0
    while i < len(raw):
        c = raw[i : i + 1]
        if c == b"\\":
            nxt = raw[i + 1 : i + 2]
            if nxt in _ESCAPES:
                out += _ESCAPES[nxt]
                i += 2
            elif nxt.isdigit():
                octal = re.match(rb"[0-7]{1,3}", raw[i + 1 : i + 4])
                assert octal
                out.append(int(octal.group(0), 8))
                i += 1 + len(octal.group(0))
            else:
                out += nxt
                i += 2
        else:
            out += c
            i += 1
    return bytes(out)


_TOKENS = re.compile(rb"/(F\d+)\s+[\d.]+\s+Tf|\(((?:\\.|[^\\)])*)\)", re.S)


def pdf_text(pdf: bytes) -> str:
    objects = _objects(pdf)
    fonts: dict[str, dict[int, str]] = {}
    for body in objects.values():
        for name, ref in re.findall(rb"/(F\d+)\s+(\d+) 0 R", body):
            font = objects.get(int(ref), b"")
            to_unicode = re.search(rb"/ToUnicode\s+(\d+) 0 R", font)
            if to_unicode:
                fonts[name.decode()] = _cmap(_stream(objects[int(to_unicode.group(1))]))
    text: list[str] = []
    for body in objects.values():
        content = _stream(body)
        if b"BT" not in content:
            continue
        current: dict[int, str] = {}
        for match in _TOKENS.finditer(content):
            if match.group(1):
                current = fonts.get(match.group(1).decode(), {})
                continue
            raw = _literal(match.group(2))
            codes = [int.from_bytes(raw[i : i + 2], "big") for i in range(0, len(raw) - 1, 2)]
            text.append("".join(current.get(code, "") for code in codes))
    return " ".join(text)
