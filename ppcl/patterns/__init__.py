"""Functional array patterns with rewrite rules, after Lift (Steuwer et al.).

A computation is written as a composition of patterns (``dsl``) over arrays with symbolic
sizes (``types``, ``sizes``); rewrite rules (``rules``) derive OpenCL-level expressions from
it; ``codegen`` turns one into ppcl's typed IR through views (``views``: split, join,
transpose, slide, pad as index arithmetic), ``run`` builds and launches it through the
runtime, and ``explore`` searches rule applications and parameters by measuring on the device,
with results cached on disk. ``interp`` gives the reference semantics the rules preserve.
"""
