"""Message content parts (``content: [...]`` items), discriminated by ``type`` exactly as Letta names them.

Stored messages hold the full union (``MessageContentPart``); the public views narrow it: user messages and
tool returns carry text/image parts, assistant messages carry text parts only.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field


class TextContent(BaseModel):
    type: Literal["text"] = "text"
    text: str
    signature: str | None = None


class UrlImage(BaseModel):
    type: Literal["url"] = "url"
    url: str


class Base64Image(BaseModel):
    type: Literal["base64"] = "base64"
    media_type: str
    data: str
    detail: str | None = None


class LettaImage(BaseModel):
    type: Literal["letta"] = "letta"
    file_id: str
    media_type: str | None = None
    data: str | None = None
    detail: str | None = None


ImageSource = Annotated[UrlImage | Base64Image | LettaImage, Field(discriminator="type")]


class ImageContent(BaseModel):
    type: Literal["image"] = "image"
    source: ImageSource


class ToolCallContent(BaseModel):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    input: dict[str, Any]
    signature: str | None = None


class ToolReturnContent(BaseModel):
    type: Literal["tool_return"] = "tool_return"
    tool_call_id: str
    content: str
    is_error: bool


class ReasoningContent(BaseModel):
    """Reasoning text; ``is_native`` is true when a reasoner model produced it (not prompted inner thoughts)."""

    type: Literal["reasoning"] = "reasoning"
    is_native: bool
    reasoning: str
    signature: str | None = None


class RedactedReasoningContent(BaseModel):
    type: Literal["redacted_reasoning"] = "redacted_reasoning"
    data: str


class OmittedReasoningContent(BaseModel):
    """Reasoning we know happened but the provider did not return."""

    type: Literal["omitted_reasoning"] = "omitted_reasoning"
    signature: str | None = None


class SummarizedReasoningContentPart(BaseModel):
    index: int
    text: str


class SummarizedReasoningContent(BaseModel):
    """Reasoning summaries in the shape of the OpenAI Responses API."""

    type: Literal["summarized_reasoning"] = "summarized_reasoning"
    id: str
    summary: list[SummarizedReasoningContentPart]
    encrypted_content: str | None = None

    def combined_text(self) -> str | None:
        """The non-empty summary parts joined by blank lines, or None when there are none."""
        parts = [part.text for part in self.summary if part.text != ""]
        return "\n\n".join(parts) if parts else None


MessageContentPart = Annotated[
    TextContent
    | ImageContent
    | ToolCallContent
    | ToolReturnContent
    | ReasoningContent
    | RedactedReasoningContent
    | OmittedReasoningContent
    | SummarizedReasoningContent,
    Field(discriminator="type"),
]
"""Any part a stored message (or a MessageCreate) may hold: Letta's ``LettaMessageContentUnion``."""

UserContentPart = Annotated[TextContent | ImageContent, Field(discriminator="type")]
"""Parts allowed in ``user_message.content`` and in tool returns."""

ToolReturnContentPart = UserContentPart

AssistantContentPart = TextContent
"""Parts allowed in ``assistant_message.content``."""


def tool_return_to_text(parts: str | list[TextContent | ImageContent] | None) -> str | None:
    """Flatten multi-modal tool output to text, standing in a placeholder for images.

    Used for the deprecated string-only ``tool_return`` field, which cannot carry images.
    """
    if parts is None or isinstance(parts, str):
        return parts
    texts = [part.text for part in parts if isinstance(part, TextContent) and part.text]
    images = sum(1 for part in parts if isinstance(part, ImageContent))
    result = "\n".join(texts)
    if images:
        placeholder = "[Image omitted]" if images == 1 else f"[{images} images omitted]"
        result = f"{result} {placeholder}" if result else placeholder
    return result or None
