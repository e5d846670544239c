"""Running studies: the pipeline, the plan before it, QA systems, background jobs, imports of results, the demo."""
