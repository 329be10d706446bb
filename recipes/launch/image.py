"""Where an image keeps code, and where an install takes its packages from: the one reading of
both, used by Check 10 over a trace and by the script analysis (recipes.bash.detect).

A write into Python's package folders, an engine's source tree or a code file (`.py`, `.pth`,
`.so`, a start-up hook) changes the code a server runs; a write to scratch and caches, or of a
model, a dataset, a log or a marker, is the job's data (a model's own files are Check 8's).
"""
from __future__ import annotations

import re
from typing import Iterable

# Python's package folders and the engines' source trees in an image.
# Unanchored: the script analysis reads paths that may begin with a variable (`$ROOT/usr/lib/...`).
CODE_TREE = (
    r"(?:site|dist)-packages|/usr/(?:local/)?lib/python|/opt/conda/lib/python|/(?:sgl|vllm)-workspace(?:/|$)"
    r"|/opt/(?:sglang|vllm|tensorrt_llm|atom|dynamo|rocm)(?:/|$)"
    r"|/(?:sglang|vllm|tensorrt_llm|atom|aiter|flashinfer|triton|sgl-kernel)/"
)
# Files that are code wherever they are.
CODE_FILE = r"\.(?:py|pth|so|pyc)$|(?:^|/)(?:sitecustomize|usercustomize)\.py$"
CODE_PATH = re.compile(f"{CODE_TREE}|{CODE_FILE}")
CODE_TREE_PATH = re.compile(CODE_TREE)
HOOK_FILE = re.compile(r"(?:^|/)(?:sitecustomize|usercustomize)\.py$|\.pth$")
# Folders a launch may write without changing the engine: scratch and caches.
SCRATCH = re.compile(r"^/(?:tmp|var/tmp|dev|run|proc|sys)(?:/|$)|^/(?:root|home/[^/]+)/\.cache(?:/|$)")


def code_path(path: str, engine_dists: Iterable[str] = (), *, image: bool = True) -> bool:
    """A path that holds code (a package folder, an engine's tree, a start-up hook; in the image
    itself also any code file) and is not scratch. `engine_dists` are the engines' distribution
    names (recipes.engines dist_name): a folder named after one is the engine's tree. A folder
    mounted from the host (`image=False`) holds the job's own files: a `.py` there is the
    repository's or the job's, not the image's."""
    if SCRATCH.match(path):
        return False
    if (CODE_PATH if image else CODE_TREE_PATH).search(path) or HOOK_FILE.search(path):
        return True
    from recipes.engines import dist_name

    names = frozenset(engine_dists)
    return any(dist_name(part) in names for part in path.split("/") if part)


# Options of pip/uv install that take their packages from somewhere other than the image's index
# (another index, a folder of wheels); the pip family's handler reads them too.
PIP_INDEX_OPTIONS = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--index", "--default-index")
_VCS = ("git+", "hg+", "svn+", "bzr+")
_ARCHIVES = (".whl", ".tar.gz", ".tgz", ".zip", ".tar.bz2")


def install_origin(words: Iterable[str]) -> str | None:
    """Where an install (its packages and indexes, as the trace's install effect holds them) takes
    packages from when it is not the image's own index, else None. A requirements or constraints
    file (`-r`/`-c`) names packages of the index; `--no-index` alone names none."""
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w in ("-r", "--requirement", "-c", "--constraint"):
            skip = True
            continue
        if w in PIP_INDEX_OPTIONS or w.startswith(tuple(f"{o}=" for o in PIP_INDEX_OPTIONS if o.startswith("--"))):
            return "another package index"
        if w in ("-e", "--editable"):
            return "a source tree"
        if w.startswith(_VCS) or re.search(r"\.git(?:@|#|$)", w):
            return "a git URL" if w.startswith("git+") or ".git" in w else "a version-control URL"
        if "://" in w:
            return "a URL"
        if w.endswith(_ARCHIVES):
            return "a file"
        if w == "." or w.startswith(("/", "./", "../", "~", "file:")):
            return "a source tree"
    return None
