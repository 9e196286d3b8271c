"""``acp-codegen adopt``: an SDK's existing schema module becomes settings of acp-codegen.

Beside the pipeline, not in it (nothing in the generator imports this package;
``tests/test_architecture.py`` holds it so): read the module in the SDK's own interpreter
(``read``, running ``reader.py``), match each public name to what acp-codegen generates over
the same base by wire shape (``match``, ``shapes``), derive the settings that reproduce the
names (``settings``), move the code the SDK added to its classes into a module of its own
(``carry``), find the SDK's own modules that generate wires (``discover``), take over its
regeneration command (``regen``), generate and verify the result against the old module
(``corpus``, ``verify``), then write the settings (``pyproject``), the output and the module
(``command``).
"""
