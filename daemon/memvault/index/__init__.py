"""What is derived from the vault and kept in .memvault/: the SQLite store (notes, chunks,
links, FTS5, the embedding cache), the hnswlib vectors, and the embedding model."""
