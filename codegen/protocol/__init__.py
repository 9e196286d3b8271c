"""The input side of ``generate``: schema text to the IR. JSON read strictly (``load``), an
upstream release's unmarked method types found (``method_inference``), fragments laid over a
base (``overlay``), validated (``validate``, ``names``, ``patterns``), features selected
(``features``), anonymous classes named (``hoist``) and the user's names applied
(``class_names``), then built into the IR (``ir``, with the schema the models are made from,
``models_schema``). ``sources`` strings these together: the one loader every command uses.
Imports only the shared top-level modules."""
