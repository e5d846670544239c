"""lsqa: a workbench for long-span question answering over whole books.

Implements Bohnet et al., "Long-Span Question-Answering: Automatic Question Generation and
QA-System Ranking via Side-by-Side Evaluation" (see README for the map from paper to modules).
"""

import os as _os

# Nothing in lsqa may download models or data at run time (README, "Offline by design").
for _name, _value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("LITELLM_LOCAL_MODEL_COST_MAP", "True")):
    _os.environ.setdefault(_name, _value)

__version__ = "0.1.0"
