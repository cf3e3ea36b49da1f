"""Reports built from finished run folders: the HTML leaderboard (`html.write_leaderboard`, a
self-contained page plus its data as JSON and CSV) and comparisons between runs."""
