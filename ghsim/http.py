"""HTTP plumbing shared by every resource: requests, responses, GitHub's error bodies, pagination."""
from __future__ import annotations

import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

DOCS = "https://docs.github.com/rest"
DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100
MSG_NOT_FOUND = "Not Found"
MSG_VALIDATION = "Validation Failed"
# Writes, for token scopes and ghost writes.
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})


@dataclass
class Response:
    status: int
    body: Any = None  # JSON-able, or bytes for raw payloads
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json; charset=utf-8"


class HttpError(Exception):
    def __init__(self, status: int, message: str = MSG_NOT_FOUND, errors: list | None = None):
        super().__init__(message)
        self.status, self.message, self.errors = status, message, errors


def not_found() -> HttpError:
    return HttpError(404, MSG_NOT_FOUND)


def invalid(message: str, field_name: str = "", code: str = "invalid") -> HttpError:
    return HttpError(422, MSG_VALIDATION, [{"resource": "Resource", "field": field_name, "code": code, "message": message}])


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: Mapping[str, str]
    body: Any
    params: dict[str, str]
    actor: str | None = None



Handler = Callable[[Request], Response]


class Pages:
    """GitHub's page/per_page pagination with Link headers."""

    def paginate(self, req: Request, items: list) -> tuple[list, dict[str, str]]:
        try:
            per_page = min(MAX_PER_PAGE, max(1, int(req.query.get("per_page", DEFAULT_PER_PAGE))))
            page = max(1, int(req.query.get("page", 1)))
        except ValueError:
            raise invalid("per_page and page must be integers") from None
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page: page * per_page]

        def link(p: int) -> str:
            q = dict(req.query, page=str(p), per_page=str(per_page))
            return f"<{self.api}{req.path}?{urllib.parse.urlencode(q)}>"

        rels = []
        if page < last:
            rels += [f'{link(page + 1)}; rel="next"', f'{link(last)}; rel="last"']
        if page > 1:
            rels += [f'{link(1)}; rel="first"', f'{link(min(page - 1, last))}; rel="prev"']
        return chunk, ({"Link": ", ".join(rels)} if rels else {})

    def listing(self, req: Request, items: list, shape: Callable[[Any], dict]) -> Response:
        chunk, headers = self.paginate(req, items)
        return Response(200, [shape(x) for x in chunk], headers)

    def wrapped_listing(self, req: Request, key: str, items: list, shape: Callable[[Any], dict]) -> Response:
        chunk, headers = self.paginate(req, items)
        return Response(200, {"total_count": len(items), key: [shape(x) for x in chunk]}, headers)
