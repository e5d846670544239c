"""Pure text handling every floor shares: words and sentences, book passages with offsets, prompts as parts, excerpts marked in text."""
