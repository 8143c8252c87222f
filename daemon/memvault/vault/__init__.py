"""The vault's files on disk: scanning, reading, safe paths and atomic compare-and-swap
writes (files), the single-writer lock and what makes a folder a vault (lock), the
daemon file that says which daemon serves it (runfile), and laying a new vault down
(template)."""
