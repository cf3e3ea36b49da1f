"""Reports built from finished run folders: the HTML leaderboard (`leaderboard/`, `evalkit report`:
a self-contained page plus its data as JSON and CSV) and comparisons between runs (`compare/`,
`evalkit compare`)."""
