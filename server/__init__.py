"""The language server: a thin pygls adapter over the pure engines."""
