"""Samples, ids and comparison helpers shared by the wire-model tests."""

import json
from typing import Any

from pydantic import BaseModel

from tests.shared_paths import SAMPLES

BLOCK_ID = "block-fbde3dd6-5072-42f7-90f4-5a83f25444f4"


def load(name: str) -> Any:
    return json.loads((SAMPLES / f"{name}.json").read_text())


def dump(model: BaseModel) -> Any:
    return model.model_dump(mode="json", by_alias=True)
