"""What studies read: books, NarrativeQA, entity chains, BM25 retrieval, generated questions and the contexts shown to models."""
