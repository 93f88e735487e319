"""Paper-style figures and tables from nkbench CSV/JSON results (see scripts/plot_results.py)."""
