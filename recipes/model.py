"""The base of every pydantic model of the bot.

Pydantic builds a model's validation schema when its class is defined, unless the model defers
it to its first use (`defer_build`). A verdict imports every check and every model, but a given
review instantiates only some of them (a local review never builds the GitHub-only rows, a PR
without srt recipes never builds a binding), so building on first use takes that work off every
process's start-up. Subclasses add their own `model_config`; pydantic merges it with this one.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(defer_build=True)
