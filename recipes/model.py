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


def keep(model: BaseModel, name: str, value: object) -> None:
    """Keep `value` in a model's instance dict beside its fields, as a cached property keeps its
    value: it is not a field, so it is neither validated, dumped nor compared. A pydantic
    private attribute would be, and pydantic sets up a model's private attributes in Python for
    every instance it builds (a fifth of building a recipe variant). Read it back with `kept`."""
    model.__dict__[name] = value


def kept(model: BaseModel, name: str) -> object:
    """What `keep` kept under `name` in a model; None when nothing was."""
    return model.__dict__.get(name)
