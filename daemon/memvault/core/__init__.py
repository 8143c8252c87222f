"""The pure core: parsing, resolving, planning. No file I/O, threads or clocks."""
