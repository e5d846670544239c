"""lsqa: a workbench for long-span question answering over whole books.

Implements Bohnet et al., "Long-Span Question-Answering: Automatic Question Generation and
QA-System Ranking via Side-by-Side Evaluation" (see README for the map from paper to modules).
"""

import os as _os

# Nothing in lsqa may download models or data at run time (README, "Offline by design").
# One BLAS thread: lsqa's linear algebra is many small batched solves (bootstrap and fragility refits), which
# threaded OpenBLAS makes several times costlier in CPU on a small shared machine (docs/BENCHMARKS.md).
# Defaults only, and only effective when lsqa is imported before numpy: the dashboard and the CLI do so.
for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
                      ("OPENBLAS_NUM_THREADS", "1")):
    _os.environ.setdefault(_name, _value)

__version__ = "0.1.0"
