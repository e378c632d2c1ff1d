"""A PDF's text, read in a child process with bounded memory and CPU time: `python -m memlet.folders.pdf_worker MB`.

pdfminer inflates every compressed stream whole, so a 400 KB upload of zeros compressed by zlib takes 800 MB to read
and a 16 MB one would take the server's whole memory. The child gets an address-space cap (the first argument, in
megabytes) and a CPU-time cap (the second, in seconds); the parent (`parsing.parse_file`) also waits at most that long.
The PDF's bytes come on stdin, its text goes to stdout as UTF-8. Exit 0: text; exit 2: the PDF is unreadable (the
message on stderr); exit 3: it needs more memory than allowed. A kill by the CPU cap shows as a signal.
"""

import resource
import sys

EXIT_UNREADABLE = 2
EXIT_TOO_LARGE = 3


def _cap(which: int, value: int) -> None:
    _soft, hard = resource.getrlimit(which)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(which, (value, value))


def main(argv: list[str]) -> int:
    memory_mb, cpu_s = int(argv[1]), int(argv[2])
    # Imported before the caps: they are the reader's cost, not the PDF's.
    import pdfminer.converter  # noqa: F401

    from memlet.folders.parsing import ParseError, pdf_text

    data = sys.stdin.buffer.read()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _cap(resource.RLIMIT_AS, memory_mb * 1024 * 1024)
    _cap(resource.RLIMIT_CPU, cpu_s)
    try:
        text = pdf_text(data)
    except MemoryError:
        return EXIT_TOO_LARGE
    except ParseError as exc:
        sys.stderr.write(str(exc))
        return EXIT_UNREADABLE
    except Exception as exc:  # a pdfminer bug on a hostile file: the file's error, as any unreadable PDF
        sys.stderr.write(f"Could not parse file: {type(exc).__name__}")
        return EXIT_UNREADABLE
    sys.stdout.buffer.write(text.encode("utf-8", errors="replace"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
