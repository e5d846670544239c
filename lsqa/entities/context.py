def entity_context(*a, **k): raise NotImplementedError
