"""The base of every pydantic model of the bot.

Pydantic builds a model's validation schema when its class is defined, unless the model defers
it to its first use (`defer_build`). A verdict imports every check and every model, but a given
process instantiates only some of them (routing an event, `--help`, a review that stops early),
so building on first use takes that work off every process's start-up. Subclasses add their
own `model_config`; pydantic merges it with this one.

Deferring is safe only where pydantic builds a deferred schema under a lock: from 2.14 on
(pydantic PR 13438). Before it, two threads instantiating one model for the first time could
race through `model_rebuild()` and validate with another class's schema, and the GitHub mode
reads the API and evaluates checks in thread pools. Older pydantic builds at import, as before.
"""
from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict
from pydantic.version import VERSION

# The first pydantic release whose `model_rebuild()` holds a lock.
LOCKED_REBUILD = (2, 14)


def defers(version: str) -> bool:
    """Whether models defer their schemas under this pydantic version (`2.14.0`, `2.15.0b1`)."""
    m = re.match(r"(\d+)\.(\d+)", version)
    return m is not None and (int(m.group(1)), int(m.group(2))) >= LOCKED_REBUILD


DEFER_BUILD = defers(VERSION)


class Model(BaseModel):
    model_config = ConfigDict(defer_build=DEFER_BUILD)
