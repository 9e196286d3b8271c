"""``acp-codegen adopt``: an SDK's existing schema module becomes settings of acp-codegen.

Beside the pipeline, not in it (nothing in the generator imports this package): read the
module in the SDK's own interpreter (``read``, running ``reader.py``), match each public
name to what acp-codegen generates over the same base by wire shape (``match``), derive
the settings that reproduce the names (``settings``), move the code the SDK added to its
classes into a module of its own (``carry``), generate and verify the result against the
old module (``verify``), then write the settings, the output and the module (``command``).
"""
