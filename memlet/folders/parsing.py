"""Uploaded bytes → text: PDFs as Letta's default parser (markitdown) reads them, everything else (HTML with its
markup, as Letta keeps it) as UTF-8.

Letta 0.16.8 read a PDF with markitdown, which takes pdfminer.six's text (its layout analysis: a blank line between
text blocks, a form feed where each page after the first starts) and then drops trailing spaces from every line and
squeezes three or more newlines into two; memlet does the same with pdfminer.six. (A Letta server with a Mistral API
key used Mistral's OCR instead, which memlet does not call.) A PDF with no text is an empty file, as in Letta.

Text files are decoded in a worker thread (`parse_file`), so a large one never blocks the event loop. A PDF is read
in a child process (`memlet/folders/pdf_worker.py`) with its memory and CPU time capped (`PdfLimits`): pdfminer
inflates compressed streams whole, so a small hostile upload could otherwise take the server's memory. pdfminer reads
some 20-50 text pages a second (pypdf, used before, read about four times as many).
"""

import asyncio
import io
import logging
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import memlet

# A PDF with more pages than this is refused rather than parsed for minutes.
MAX_PDF_PAGES = 2_000


class ParseError(Exception):
    """The file's text could not be extracted; the message becomes the file's error_message."""


@dataclass(frozen=True)
class PdfLimits:
    """What reading one PDF may take: address space of its child process, and CPU (also the wall-clock wait)."""

    memory_mb: int = 1024
    seconds: int = 300


def _decode(data: bytes) -> str:
    text = data.decode("utf-8-sig", errors="replace")
    return text.replace("\x00", "")  # Postgres text cannot hold NUL


def _markitdown_text(text: str) -> str:
    """markitdown's clean-up of a converter's text: lines without trailing whitespace, at most one blank line."""
    lines = "\n".join(line.rstrip() for line in re.split(r"\r?\n", text))
    return re.sub(r"\n{3,}", "\n\n", lines)


def pdf_text(data: bytes) -> str:
    """The text of a PDF, in this process (`pdf_worker` calls it under its caps)."""
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


async def _pdf_text_in_child(data: bytes, limits: PdfLimits) -> str:
    from memlet.folders import pdf_worker

    args = [sys.executable, "-m", "memlet.folders.pdf_worker", str(limits.memory_mb), str(limits.seconds)]
    # The child sees no server settings or keys: only where Python finds memlet.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(Path(memlet.__file__).parent.parent)}
    child = await asyncio.create_subprocess_exec(
        *args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    try:
        out, err = await asyncio.wait_for(child.communicate(data), timeout=limits.seconds + 5)
    except TimeoutError:
        child.kill()
        await child.wait()
        raise ParseError(f"Could not read PDF: it took longer than {limits.seconds} s") from None
    finally:
        if child.returncode is None:  # cancelled (server stopping): leave no child behind
            child.kill()
            await child.wait()
    if child.returncode == 0:
        return out.decode("utf-8", errors="replace")
    if child.returncode == pdf_worker.EXIT_UNREADABLE:
        raise ParseError(err.decode("utf-8", errors="replace") or "Could not read PDF")
    if child.returncode == pdf_worker.EXIT_TOO_LARGE:
        raise ParseError(f"Could not read PDF: it needs more than {limits.memory_mb} MB of memory to read")
    log_tail = err.decode("utf-8", errors="replace")[-500:]
    logging.getLogger(__name__).warning("PDF reader exited with %s: %s", child.returncode, log_tail)
    raise ParseError(f"Could not read PDF: its reader stopped (exit {child.returncode}; time or memory limit)")


async def parse_file(data: bytes, media_type: str, pdf_limits: PdfLimits | None = None) -> str:
    """The text of an upload: a PDF in a capped child process, anything else decoded in a worker thread."""
    if media_type == "application/pdf":
        return await _pdf_text_in_child(data, pdf_limits or PdfLimits())
    try:
        return await asyncio.to_thread(_decode, data)
    except Exception as exc:  # a decoder bug on a hostile file must end as the file's error, not crash the worker
        logging.getLogger(__name__).exception("parsing failed")
        raise ParseError(f"Could not parse file: {type(exc).__name__}") from exc
