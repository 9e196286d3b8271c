"""What the IR becomes, as plain data handed to the renderers: the dispatch routes
(``dispatch``), the v1 <-> v2 converters (``conversions``), and what the model settings
make of the models (``customize``, ``markers``). Templates only print these plans."""
