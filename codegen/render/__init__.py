"""Text: the models through datamodel-code-generator (``models``, the one place that calls
its API), every other module through Jinja (``templates``), the runtime modules copied
(``runtime``), then everything laid out (``formatting``) over worker processes
(``workers``). Kept light: black's worker processes import ``formatting``."""
