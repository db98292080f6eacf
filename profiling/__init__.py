"""Profiling: harness discovery, a killable worker process, roofline, backends local / ssh / ray."""
