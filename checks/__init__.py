"""The numbered policy checks, the verdict engine and its templates. Pure: no network."""
