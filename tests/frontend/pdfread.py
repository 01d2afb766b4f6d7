"""Reading the PDFs we write, with pypdf: the text of every page, and the pages' images."""

from __future__ import annotations

import io

from pypdf import PdfReader


def pdf_pages(pdf: bytes) -> list[str]:
    """Each page's text, whitespace collapsed."""
    reader = PdfReader(io.BytesIO(pdf))
    return [" ".join((page.extract_text() or "").split()) for page in reader.pages]


def pdf_text(pdf: bytes) -> str:
    return " ".join(pdf_pages(pdf))


def pdf_image_count(pdf: bytes) -> int:
    reader = PdfReader(io.BytesIO(pdf))
    return sum(len(page.images) for page in reader.pages)
