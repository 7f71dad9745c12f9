"""The ground floor: the running example, input checks and the one rounding rule for replica
counts, the book's notation as sympy symbols, statistics of a measured share.

Layer 1 of 9 (lowest). Imports nothing from replicaplan outside ``core``.
"""
