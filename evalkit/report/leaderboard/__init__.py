"""`evalkit report`: run folders in, the HTML leaderboard out (`output.write_leaderboard`).

loaded_runs (run folders, published scores) → board (the leaderboard as data: rows, suite boards;
with pareto and user_pairs) → attempt_detail (one attempt's detail) → output (the page from
templates/, its JSON and CSV files). Kept empty so that importing one module loads only what it needs.
"""
