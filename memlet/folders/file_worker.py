"""File work in a child process with bounded memory and CPU time: `python -m memlet.folders.file_worker JOB MB S`.

Two jobs run here rather than in the server's process (`memlet/folders/child.py` starts them):
- `pdf`: a PDF's text. pdfminer inflates every compressed stream whole, so a 400 KB upload of zeros compressed by
  zlib takes 800 MB to read, and a 16 MB one would take the server's whole memory.
- `chunks`: a large text's chunks (Letta's sentence splitting costs seconds of CPU per megabyte; in a thread of the
  server it would hold the interpreter lock that every request needs for that long).
The child gets an address-space cap (MB) and a CPU-time cap (S); its parent also waits at most that long. The input
comes on stdin (the PDF's bytes; for `chunks`, JSON `{text, media_type, chunk_size, fallback}`), the answer goes to
stdout (the text as UTF-8; the chunks as a JSON list). Exit 0: done; exit 2: the input is unreadable (the message on
stderr); exit 3: it needs more memory than allowed. A kill by the CPU cap shows as a signal.
"""

import json
import resource
import sys

EXIT_UNREADABLE = 2
EXIT_TOO_LARGE = 3


def _cap(which: int, value: int) -> None:
    _soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def _chunks(data: bytes) -> bytes:
    from memlet.folders.chunking import chunk_file, fallback_chunks

    job = json.loads(data)
    if job["fallback"]:
        chunks = fallback_chunks(job["text"])
    else:
        chunks = chunk_file(job["text"], job["media_type"], job["chunk_size"])
    return json.dumps(chunks).encode()


def _pdf(data: bytes) -> bytes:
    from memlet.folders.parsing import pdf_text

    return pdf_text(data).encode("utf-8", errors="replace")


def main(argv: list[str]) -> int:
    job, memory_mb, cpu_s = argv[1], int(argv[2]), int(argv[3])
    # Imported before the caps: they are the worker's cost, not the input's.
    import pdfminer.converter  # noqa: F401

    from memlet.folders.parsing import ParseError
    from memlet.folders.sentence_splitter import split_sentences

    if job == "chunks":
        split_sentences("Warm up.", 300, 50)  # builds the tokenizer (the bundled cl100k_base file) before the caps

    run = {"pdf": _pdf, "chunks": _chunks}[job]
    data = sys.stdin.buffer.read()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _cap(resource.RLIMIT_AS, memory_mb * 1024 * 1024)
    _cap(resource.RLIMIT_CPU, cpu_s)
    try:
        out = run(data)
    except MemoryError:
        return EXIT_TOO_LARGE
    except ParseError as exc:
        sys.stderr.write(str(exc))
        return EXIT_UNREADABLE
    except Exception as exc:  # a parser bug on a hostile file: the file's error, as any unreadable input
        sys.stderr.write(f"Could not parse file: {type(exc).__name__}")
        return EXIT_UNREADABLE
    sys.stdout.buffer.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
