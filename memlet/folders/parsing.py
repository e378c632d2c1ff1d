"""Uploaded bytes → text: PDFs through pypdf, everything else (HTML with its markup, as Letta keeps it) as UTF-8.

Parsing runs in a worker thread (`parse_file`), so a large PDF never blocks the event loop. A PDF without text,
or a text file of nothing but whitespace, is an error: the upload ends in `processing_status: error` with the
reason. An empty text file is not: as in Letta, it is processed (and shown to agents) as an empty file. pypdf
(~20 MB resident) is imported by the first PDF, not at start-up.
"""

import asyncio
import io
import logging

# A PDF with more pages than this is refused rather than parsed for minutes.
MAX_PDF_PAGES = 2_000
NO_TEXT = "No text could be extracted from the file"


class ParseError(Exception):
    """The file's text could not be extracted; the message becomes the file's error_message."""


def _decode(data: bytes) -> str:
    text = data.decode("utf-8-sig", errors="replace")
    return text.replace("\x00", "")  # Postgres text cannot hold NUL


def _pdf_text(data: bytes) -> str:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if len(reader.pages) > MAX_PDF_PAGES:
            raise ParseError(f"PDF has {len(reader.pages)} pages; at most {MAX_PDF_PAGES} are supported")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise ParseError(f"Could not read PDF: {exc}") from exc
    return "\n\n".join(p for p in pages if p).replace("\x00", "")


def extract_text(data: bytes, media_type: str) -> str:
    """The text of an upload of `media_type` (synchronous; see `parse_file`)."""
    if media_type == "application/pdf":
        text = _pdf_text(data)
        if not text.strip():
            raise ParseError(NO_TEXT)
        return text
    text = _decode(data)
    if text and not text.strip():
        raise ParseError(NO_TEXT)
    return text


async def parse_file(data: bytes, media_type: str) -> str:
    """`extract_text` in a worker thread."""
    try:
        return await asyncio.to_thread(extract_text, data, media_type)
    except ParseError:
        raise
    except Exception as exc:  # a parser bug on a hostile file must end as the file's error, not crash the worker
        logging.getLogger(__name__).exception("parsing failed")
        raise ParseError(f"Could not parse file: {type(exc).__name__}") from exc
