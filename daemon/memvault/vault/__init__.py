"""The vault's files on disk: scanning, reading, safe paths and atomic compare-and-swap
writes (files), the single-writer lock (lock), and laying a new vault down (template)."""
