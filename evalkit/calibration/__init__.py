"""Calibration of graders: a corpus of sloppy-but-working variants of each task's reference
change (sloppy_variants.py, corpus.py) and how well a grader (the quality axis, a reviewer model)
tells the reference from each kind (figures.py, reviewer_calibration.py)."""
