"""Uploaded bytes → text: PDFs as Letta's default parser (markitdown) reads them, everything else (HTML with its
markup, as Letta keeps it) as UTF-8.

Letta 0.16.8 read a PDF with markitdown, which takes pdfminer.six's text (its layout analysis: a blank line between
text blocks, a form feed where each page after the first starts) and then drops trailing spaces from every line and
squeezes three or more newlines into two; memlet does the same with pdfminer.six. (A Letta server with a Mistral API
key used Mistral's OCR instead, which memlet does not call.) A PDF with no text is an empty file, as in Letta.

Text files are decoded in a worker thread (`parse_file`), so a large one never blocks the event loop. A PDF is read
in a child process (`memlet/folders/file_worker.py`) with its memory and CPU time capped (`ChildLimits`): pdfminer
inflates compressed streams whole, so a small hostile upload could otherwise take the server's memory. pdfminer reads
some 20-50 text pages a second (pypdf, used before, read about four times as many).
"""

import asyncio
import io
import logging
import re

from memlet.folders.child import ChildLimits, ParseError, run_in_child

__all__ = ["ChildLimits", "ParseError", "extract_text", "parse_file", "pdf_text"]

# A PDF with more pages than this is refused rather than parsed for minutes.
MAX_PDF_PAGES = 2_000


def _decode(data: bytes) -> str:
    text = data.decode("utf-8-sig", errors="replace")
    return text.replace("\x00", "")  # Postgres text cannot hold NUL


def _markitdown_text(text: str) -> str:
    """markitdown's clean-up of a converter's text: lines without trailing whitespace, at most one blank line."""
    lines = "\n".join(line.rstrip() for line in re.split(r"\r?\n", text))
    return re.sub(r"\n{3,}", "\n\n", lines)


def pdf_text(data: bytes) -> str:
    """The text of a PDF, in this process (`file_worker` calls it under its caps)."""
    from pdfminer.converter import TextConverter
    from pdfminer.layout import LAParams
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.psexceptions import PSException

    out = io.StringIO()
    try:
        resources = PDFResourceManager(caching=True)
        device = TextConverter(resources, out, codec="utf-8", laparams=LAParams())
        interpreter = PDFPageInterpreter(resources, device)
        for number, page in enumerate(PDFPage.get_pages(io.BytesIO(data), caching=True), start=1):
            if number > MAX_PDF_PAGES:
                raise ParseError(f"PDF has more than {MAX_PDF_PAGES} pages; at most {MAX_PDF_PAGES} are supported")
            interpreter.process_page(page)
    except (PSException, ValueError, KeyError, TypeError, OSError, AssertionError) as exc:
        raise ParseError(f"Could not read PDF: {exc}") from exc
    return _markitdown_text(out.getvalue()).replace("\x00", "")


def extract_text(data: bytes, media_type: str) -> str:
    """The text of an upload of `media_type`, in this process (synchronous; the server uses `parse_file`)."""
    if media_type == "application/pdf":
        return pdf_text(data)
    return _decode(data)


async def parse_file(data: bytes, media_type: str, limits: ChildLimits | None = None) -> str:
    """The text of an upload: a PDF in a capped child process, anything else decoded in a worker thread."""
    if media_type == "application/pdf":
        return (await run_in_child("pdf", data, limits or ChildLimits())).decode("utf-8", errors="replace")
    try:
        return await asyncio.to_thread(_decode, data)
    except Exception as exc:  # a decoder bug on a hostile file must end as the file's error, not crash the worker
        logging.getLogger(__name__).exception("parsing failed")
        raise ParseError(f"Could not parse file: {type(exc).__name__}") from exc
