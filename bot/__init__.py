"""Everything that talks to GitHub: snapshot building, events, commands, publishing, the CLI."""
