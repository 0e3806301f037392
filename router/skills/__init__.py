"""Skills: fail-closed verification of skill folders against two locks, and mounting.

Data flow: a skill folder -> `folder_scan` (what is in it) -> three hashes
(`skill_lock` speaks the `skills` CLI's `.skill-lock.json` v3, `grimoire` this project's
own `grimoire.lock`) -> `verify` (every difference named) -> `mount` (an atomic copy of a
verified skill) -> `records` (rows in the SQLite file, view `v_skills`).
"""
