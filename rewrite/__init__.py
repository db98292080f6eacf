"""Verified rewrites: proposers → verifier → edits."""
