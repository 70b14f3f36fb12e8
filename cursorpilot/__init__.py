"""cursor-pilot: drive interactive command-line programs headlessly."""

__version__ = "0.1.0"
