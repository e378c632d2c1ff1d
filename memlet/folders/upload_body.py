"""Read a multipart upload from the request stream, counting bytes as they arrive.

The `file` part is kept in memory up to the upload limit and no further: one byte over it and the request ends
with 413, before the rest of the body is read. Other form fields are kept as text (bounded too, 64 KiB in all),
so a body can never grow memory beyond the limit plus a little (python-multipart bounds each part's headers).
A body the parser refuses is a 400.
"""

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from fastapi import Request
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header

from memlet.errors import BadRequestError, MemletError

FILE_FIELD = "file"
MAX_OTHER_BYTES = 64 * 1024  # every non-file part together
MAX_PARTS = 16
# After the limit is hit, this much more of the body is read and dropped so an ordinary client that is still
# sending sees the 413 instead of a reset connection; a larger body is cut off.
DRAIN_BYTES = 8 * 1024 * 1024


class UploadTooLargeError(MemletError):
    status_code = 413

    def __init__(self, limit: int) -> None:
        super().__init__(f"File too large: uploads are limited to {limit} bytes")


class MissingFilePartError(MemletError):
    status_code = 422

    def __init__(self) -> None:
        super().__init__("Field required: the upload has no `file` part")


@dataclass
class UploadedFile:
    file_name: str
    content_type: str | None
    data: bytes
    fields: dict[str, str] = field(default_factory=dict)  # the other (small) form fields, as text


@dataclass
class _Part:
    name: str = ""
    file_name: str | None = None
    content_type: str | None = None
    headers: dict[str, bytes] = field(default_factory=dict)


class _Collector:
    """python-multipart callbacks that keep the `file` part and enforce the limits."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.part = _Part()
        self.header_field = b""
        self.header_value = b""
        self.data = bytearray()
        self.found: UploadedFile | None = None
        self.other_bytes = 0
        self.parts = 0
        self.fields: dict[str, str] = {}

    def on_part_begin(self) -> None:
        self.parts += 1
        if self.parts > MAX_PARTS:
            raise BadRequestError(f"INVALID_ARGUMENT: at most {MAX_PARTS} form parts are accepted")
        self.part = _Part()
        self.data = bytearray()

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self.header_field += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self.header_value += data[start:end]

    def on_header_end(self) -> None:
        self.part.headers[self.header_field.decode("latin-1").lower()] = self.header_value
        self.header_field = self.header_value = b""

    def on_headers_finished(self) -> None:
        # Parsed as the raw bytes (latin-1 both ways, any byte survives); names are UTF-8 as browsers send them.
        _, params = parse_options_header(self.part.headers.get("content-disposition", b""))
        self.part.name = params.get(b"name", b"").decode("utf-8", "replace")
        raw_name = params.get(b"filename")
        self.part.file_name = raw_name.decode("utf-8", "replace") if raw_name is not None else None
        content_type = self.part.headers.get("content-type")
        self.part.content_type = content_type.decode("utf-8", "replace") if content_type is not None else None

    def _is_file(self) -> bool:
        return self.part.name == FILE_FIELD and self.part.file_name is not None and self.found is None

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        if self._is_file():
            if len(self.data) + (end - start) > self.limit:
                raise UploadTooLargeError(self.limit)
            self.data += data[start:end]
            return
        self.other_bytes += end - start
        if self.other_bytes > MAX_OTHER_BYTES:
            raise BadRequestError("INVALID_ARGUMENT: form fields other than the file are too large")
        self.data += data[start:end]

    def on_part_end(self) -> None:
        if self._is_file():
            self.found = UploadedFile(self.part.file_name or "", self.part.content_type, bytes(self.data))
        elif self.part.file_name is None and self.part.name:
            self.fields[self.part.name] = self.data.decode("utf-8", "replace")
        self.data = bytearray()


async def _drain(stream: AsyncIterator[bytes]) -> None:
    dropped = 0
    async for chunk in stream:
        dropped += len(chunk)
        if dropped > DRAIN_BYTES:
            return


async def read_upload(request: Request, limit: int) -> UploadedFile:
    """The `file` part of a multipart/form-data request; 413 past `limit`, 422 without a file part."""
    content_type, params = parse_options_header(request.headers.get("content-type"))
    boundary = params.get(b"boundary")
    if content_type != b"multipart/form-data" or not boundary:
        raise BadRequestError("INVALID_ARGUMENT: the upload must be multipart/form-data with a `file` part")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + MAX_OTHER_BYTES + DRAIN_BYTES:
        raise UploadTooLargeError(limit)
    collector = _Collector(limit)
    callbacks = {name: getattr(collector, name) for name in dir(collector) if name.startswith("on_")}
    parser = MultipartParser(boundary, callbacks)  # type: ignore[arg-type]
    stream = request.stream()
    try:
        async for chunk in stream:
            parser.write(chunk)
        parser.finalize()
    except UploadTooLargeError:
        await _drain(stream)
        raise
    except FormParserError as exc:
        raise BadRequestError(f"INVALID_ARGUMENT: the multipart body is malformed: {exc}") from exc
    if collector.found is None:
        raise MissingFilePartError()
    collector.found.fields = collector.fields
    return collector.found
