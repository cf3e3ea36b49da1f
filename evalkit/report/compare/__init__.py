"""`evalkit compare BASE NEW`: did the new run get worse than the base run, beyond noise?

`command.compare_command` is the command over two run folders; `comparison.compare_runs` compares
two attempt tables. Kept empty so that importing one module loads only what it needs.
"""
