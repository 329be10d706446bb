"""Everything that talks to GitHub: snapshot building, events, commands, publishing, the CLI."""

# The release version: the one place it is written (pyproject.toml reads it; CHANGELOG.md names it).
__version__ = "0.1.0"
