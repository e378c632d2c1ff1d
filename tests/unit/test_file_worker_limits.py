"""An uploaded PDF is read, and a large text split, in a capped child process: a compressed-stream bomb or a
split that runs too long ends as the file's error, the server's process unharmed.

pdfminer inflates each compressed stream whole: the 400 KB PDF below holds one page whose content stream inflates to
400 MB of spaces, which took 800 MB and 7 s to read in the server's own process."""

import asyncio
import zlib

import pytest

from memlet.folders.chunking import chunk_file, fallback_chunks
from memlet.folders.parsing import ChildLimits, ParseError, parse_file
from memlet.folders.processing import SPLIT_IN_PROCESS_CHARS, split_text
from tests.api.test_files_parity_api import pdf_pages
from tests.pdf_files import pdf_document


def bomb(megabytes: int) -> bytes:
    """One page whose FlateDecode content stream inflates to `megabytes` MB of spaces."""
    stream = zlib.compress(b" " * (megabytes * 1024 * 1024), 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    return pdf_document(objects)


def test_a_pdf_that_inflates_past_the_memory_cap_is_the_files_error() -> None:
    data = bomb(400)
    assert len(data) < 1024 * 1024
    with pytest.raises(ParseError, match="more than 256 MB of memory"):
        asyncio.run(parse_file(data, "application/pdf", ChildLimits(memory_mb=256, seconds=60)))


def test_a_pdf_that_reads_past_the_time_cap_is_the_files_error() -> None:
    with pytest.raises(ParseError, match=r"time or memory limit|longer than 1 s"):
        asyncio.run(parse_file(bomb(300), "application/pdf", ChildLimits(memory_mb=2048, seconds=1)))


def test_a_plain_pdf_still_reads_in_the_child() -> None:
    text = asyncio.run(parse_file(pdf_pages([(72, 720, "Hello from the child")]), "application/pdf", ChildLimits()))
    assert text.strip() == "Hello from the child"


def test_an_unreadable_pdf_keeps_its_message() -> None:
    with pytest.raises(ParseError, match="Could not"):
        asyncio.run(parse_file(b"%PDF-1.4\nnot really a pdf", "application/pdf", ChildLimits()))


def test_a_large_text_is_split_in_the_child_as_in_process() -> None:
    # Over SPLIT_IN_PROCESS_CHARS the sentence splitting runs in the capped child; its chunks are the same.
    text = " ".join(f"Sentence {i} of a long upload about the blue crate." for i in range(3000))
    assert len(text) > SPLIT_IN_PROCESS_CHARS
    chunks = asyncio.run(split_text(text, "text/plain", None, ChildLimits()))
    assert chunks == chunk_file(text, "text/plain", None)
    assert len(chunks) > 50
    fallback = asyncio.run(split_text(text, "text/plain", None, ChildLimits(), fallback=True))
    assert fallback == fallback_chunks(text)


def test_a_large_text_split_past_the_time_cap_is_the_files_error() -> None:
    with pytest.raises(ParseError, match=r"time or memory limit|longer than 1 s"):
        asyncio.run(split_text("." * 3_000_000, "text/plain", None, ChildLimits(memory_mb=2048, seconds=1)))
