"""The five papers, one package each: reference values, a README of what each table reproduces,
and the code that exists only because that paper has a table. Paper packages do not import each
other; what two papers share lives below them (``tables``, ``analysis``, ``metrics`` ...).
"""
