"""The numbers of the book's prose and their sources: see :mod:`.framework`."""
